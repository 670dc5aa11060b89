// Command expire-allowlists is the Lambda an EventBridge schedule runs every minute to apply allowlists' expiries.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/trigger"
)

func main() {
	f := boot.Open("expire-allowlists")
	lambda.Start(trigger.ExpireAllowlists(f.Store, time.Now, f.Log))
}
