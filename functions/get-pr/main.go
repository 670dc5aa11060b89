// Command get-pr is the Lambda of GET /api/pr/{pr_id} (a pull request).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-pr")
	lambda.Start(f.API(api.GetPR(f.Store, f.Log).Handle))
}
