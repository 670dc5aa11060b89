// Command expire-allowlists is the Lambda an EventBridge schedule runs every minute: it applies allowlists' expiries and resumes durable work whose lease has run out.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/trigger"
)

func main() {
	f := boot.Open("expire-allowlists")
	lambda.Start(trigger.ExpireAllowlists(f.Store, f.Store.Runner(time.Now), time.Now, f.Log))
}
