// Command test-webhook is the Lambda of POST /api/webhooks/{webhook_id}/test
// (a webhook.test event for that subscription).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("test-webhook")
	lambda.Start(f.API(api.TestWebhook(f.Store, time.Now, f.Log).Handle))
}
