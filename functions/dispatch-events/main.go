// Command dispatch-events is the Lambda that the table's stream invokes
// for event items (the outbox): it puts each event on the event bus and
// creates and queues its deliveries.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/bus"
	"github.com/scangate/scangate/pkg/dispatch"
	"github.com/scangate/scangate/pkg/queue"
)

func main() {
	f := boot.Open("dispatch-events")
	b, err := bus.Open(os.Getenv)
	f.Check(err)
	q, err := queue.Open(os.Getenv)
	f.Check(err)
	lambda.Start(dispatch.NewDispatcher(f.Store, b, q, time.Now, f.Log))
}
