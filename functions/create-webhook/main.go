// Command create-webhook is the Lambda of POST /api/webhooks (a webhook
// subscription, its signing secret shown once).
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
	f := boot.Open("create-webhook")
	lambda.Start(f.API(api.CreateWebhook(f.Store, seal.Lazy(keys.SecretsKey(f.Env)), f.Egress(), time.Now, f.Log).Handle))
}
