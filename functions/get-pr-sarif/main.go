// Command get-pr-sarif is the Lambda of GET /api/pr/{pr_id}/sarif: a
// SARIF 2.1.0 log of the pull request's newest scans, inline, or a
// presigned GET of it in the uploads bucket when it is larger.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/bucket"
)

func main() {
	f := boot.Open("get-pr-sarif")
	b, err := bucket.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.GetPRSARIF(f.Store, b, f.Config.SARIFInlineMax, f.Log).Handle))
}
