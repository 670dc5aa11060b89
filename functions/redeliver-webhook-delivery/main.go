// Command redeliver-webhook-delivery is the Lambda of POST
// /api/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/queue"
)

func main() {
	f := boot.Open("redeliver-webhook-delivery")
	q, err := queue.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.RedeliverWebhookDelivery(f.Store, q, time.Now, f.Log).Handle))
}
