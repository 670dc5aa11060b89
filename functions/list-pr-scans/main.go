// Command list-pr-scans is the Lambda of GET /api/pr/{pr_id}/scans (a pull request's scans, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("list-pr-scans")
	lambda.Start(f.API(api.ListPRScans(f.Store, f.Cursors(), f.Log).Handle))
}
