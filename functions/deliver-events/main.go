// Command deliver-events is the Lambda that the delivery queues invoke: it
// makes each attempt of a webhook delivery or a commit status, records it
// and schedules the next.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/events/delivery"
	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/queue/deliverysqs"
	"github.com/scangate/scangate/internal/seal"
)

func main() {
	f := boot.Open("deliver-events")
	q, err := deliverysqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(delivery.NewDeliverer(f.Store, q, seal.Lazy(keys.SecretsKey(f.Env)), f.Egress(), f.Config, time.Now, f.Log))
}
