// Command list-webhook-deliveries is the Lambda of GET
// /api/webhooks/{webhook_id}/deliveries.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-webhook-deliveries")
	lambda.Start(f.API(api.ListWebhookDeliveries(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
