// Command ingest-sarif-upload is the Lambda that S3's ObjectCreated events
// of the uploads prefix invoke: it records each uploaded SARIF log and
// sets its upload's status.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/trigger"
)

func main() {
	f := boot.Open("ingest-sarif-upload")
	b, err := bucket.Open(os.Getenv)
	f.Check(err)
	lambda.Start(trigger.NewIngest(f.Store, b, f.Config.UploadMaxBytes, time.Now, f.Log))
}
