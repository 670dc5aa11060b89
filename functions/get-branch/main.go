// Command get-branch is the Lambda of GET /api/branches/{branch_id} (a branch and its newest analyses).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-branch")
	lambda.Start(f.API(api.GetBranch(f.Store, f.Log).Handle))
}
