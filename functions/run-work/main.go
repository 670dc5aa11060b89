// Command run-work is the Lambda of the work queue: it runs the steps of dispatched durable work (an allowlist's re-evaluation of many findings), each once, and completes the work after its last step.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/trigger"
)

func main() {
	f := boot.Open("run-work")
	lambda.Start(trigger.RunWork(f.Store.Runner(time.Now, nil), f.Log))
}
