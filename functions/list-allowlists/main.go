// Command list-allowlists is the Lambda of GET /api/whitelist (allowlists, paged).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-allowlists")
	lambda.Start(f.API(api.ListAllowlists(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), time.Now, f.Log).Handle))
}
