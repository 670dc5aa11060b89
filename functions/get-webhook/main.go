// Command get-webhook is the Lambda of GET /api/webhooks/{webhook_id}.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-webhook")
	lambda.Start(f.API(api.GetWebhook(f.Store, time.Now, f.Log).Handle))
}
