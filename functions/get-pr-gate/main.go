// Command get-pr-gate is the Lambda of GET /api/pr/{pr_id}/gate (a pull request's gate).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-pr-gate")
	lambda.Start(f.API(api.GetPRGate(f.Store, f.Log).Handle))
}
