// Command update-allowlist is the Lambda of PUT /api/whitelist/{whitelist_id} (Modify Allowlist).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("update-allowlist")
	lambda.Start(f.API(api.UpdateAllowlist(f.Store, time.Now, f.Log).Handle))
}
