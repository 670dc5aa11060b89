// Command create-allowlist is the Lambda of POST /api/whitelist (create an allowlist).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("create-allowlist")
	lambda.Start(f.API(api.CreateAllowlist(f.Store, time.Now, f.Log).Handle))
}
