// Command list-tokens is the Lambda of GET /api/auth/tokens (list tokens).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-tokens")
	lambda.Start(f.API(api.ListTokens(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), time.Now, f.Log).Handle))
}
