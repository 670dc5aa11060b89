// Command rotate-webhook-secret is the Lambda of POST
// /api/webhooks/{webhook_id}/rotate-secret.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/seal"
)

func main() {
	f := boot.Open("rotate-webhook-secret")
	lambda.Start(f.API(api.RotateWebhookSecret(f.Store, seal.Lazy(keys.SecretsKey(f.Env)), time.Now, f.Log).Handle))
}
