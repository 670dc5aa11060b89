// Command list-pr-absent is the Lambda of GET /api/pr/{pr_id}/absent (the baselines' findings a pull request fixes, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-pr-absent")
	lambda.Start(f.API(api.ListAbsent(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
