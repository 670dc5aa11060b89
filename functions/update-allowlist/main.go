// Command update-allowlist is the Lambda of PUT /api/whitelist/{whitelist_id} (Modify Allowlist; re-evaluates what it covered and covers, or dispatches that work when large).
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
	f := boot.Open("update-allowlist")
	q, err := worksqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.UpdateAllowlist(f.Store, f.Store.Runner(time.Now, q), time.Now, f.Log).Handle))
}
