// Command create-allowlist is the Lambda of POST /api/whitelist (create an allowlist; re-evaluates what it covers, or dispatches that work when large).
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/queue/worksqs"
)

func main() {
	f := boot.Open("create-allowlist")
	q, err := worksqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.CreateAllowlist(f.Store, f.Store.Runner(time.Now, q), time.Now, f.Log).Handle))
}
