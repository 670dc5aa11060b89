// Command delete-webhook is the Lambda of DELETE /api/webhooks/{webhook_id}.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("delete-webhook")
	lambda.Start(f.API(api.DeleteWebhook(f.Store, time.Now, f.Log).Handle))
}
