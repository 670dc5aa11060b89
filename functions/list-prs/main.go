// Command list-prs is the Lambda of GET /api/pr (pull requests by last scan, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-prs")
	lambda.Start(f.API(api.ListPRs(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
