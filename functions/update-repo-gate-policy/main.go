// Command update-repo-gate-policy is the Lambda of PUT /api/gate/policy/repos/{repo_id} (a repository's gate policy; re-judges every pull request's gate).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("update-repo-gate-policy")
	lambda.Start(f.API(api.UpdateRepoGatePolicy(f.Store, f.Store.Runner(time.Now, nil), time.Now, f.Log).Handle))
}
