// Command dispatch-events is the Lambda that the table's stream invokes
// for event items (the outbox): it puts each event on the event bus and
// creates and queues its deliveries.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/events/bus"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/queue/deliverysqs"
)

func main() {
	f := boot.Open("dispatch-events")
	b, err := bus.Open(os.Getenv)
	f.Check(err)
	q, err := deliverysqs.Open(os.Getenv)
	f.Check(err)
	lambda.Start(dispatch.NewDispatcher(f.Store, b, q, time.Now, f.Log))
}
