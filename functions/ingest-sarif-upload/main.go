// Command ingest-sarif-upload is the Lambda that S3's ObjectCreated events
// of the uploads prefix invoke: it records each uploaded SARIF log and
// sets its upload's status.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/bucket"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-sarif-upload:", err)
		os.Exit(1)
	}
	b, err := bucket.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-sarif-upload:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewIngestSarifUpload(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg, Bucket: b}))
}
