// Command redeliver-webhook-delivery is the Lambda of POST
// /api/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/queue/deliverysqs"
)

func main() {
	f := boot.Open("redeliver-webhook-delivery")
	q, err := deliverysqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.RedeliverWebhookDelivery(f.Store, q, time.Now, f.Log).Handle))
}
