// Command expire-allowlists is the Lambda an EventBridge schedule runs every minute: it applies allowlists' expiries (with the work that re-evaluates what they covered) and resumes durable work whose lease has run out.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/queue/worksqs"
	"github.com/scangate/scangate/internal/trigger"
)

func main() {
	f := boot.Open("expire-allowlists")
	q, err := worksqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(trigger.ExpireAllowlists(f.Store, f.Store.Runner(time.Now, q), time.Now, f.Log))
}
