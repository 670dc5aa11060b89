// Command get-allowlist is the Lambda of GET /api/whitelist/{whitelist_id} (an allowlist and its comments).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-allowlist")
	lambda.Start(f.API(api.GetAllowlist(f.Store, time.Now, f.Log).Handle))
}
