// Command delete-repo-gate-policy is the Lambda of DELETE /api/gate/policy/repos/{repo_id} (a repository returns to the global gate policy; re-judges every pull request's gate).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("delete-repo-gate-policy")
	lambda.Start(f.API(api.DeleteRepoGatePolicy(f.Store, f.Store.Runner(time.Now, nil), time.Now, f.Log).Handle))
}
