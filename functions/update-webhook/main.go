// Command update-webhook is the Lambda of PATCH /api/webhooks/{webhook_id}.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("update-webhook")
	lambda.Start(f.API(api.UpdateWebhook(f.Store, f.Egress(), time.Now, f.Log).Handle))
}
