// Command list-findings is the Lambda of GET /api/pr/scan/{pr_scan_id}/findings (a scan's findings, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-findings")
	lambda.Start(f.API(api.ListFindings(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
