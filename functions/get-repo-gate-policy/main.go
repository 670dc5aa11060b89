// Command get-repo-gate-policy is the Lambda of GET /api/gate/policy/repos/{repo_id} (a repository's gate policy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-repo-gate-policy")
	lambda.Start(f.API(api.GetRepoGatePolicy(f.Store, f.Log).Handle))
}
