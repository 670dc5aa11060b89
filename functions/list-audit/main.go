// Command list-audit is the Lambda of GET /api/audit (the audit log).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-audit")
	lambda.Start(f.API(api.ListAudit(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
