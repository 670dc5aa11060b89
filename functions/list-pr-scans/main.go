// Command list-pr-scans is the Lambda of GET /api/pr/{pr_id}/scans (a pull request's scans, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-pr-scans")
	lambda.Start(f.API(api.ListPRScans(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
