// Command create-sarif-upload is the Lambda of POST
// /api/pr/scan/sarif/uploads: it records an upload and presigns the PUT of
// its object to the uploads bucket.
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
		fmt.Fprintln(os.Stderr, "create-sarif-upload:", err)
		os.Exit(1)
	}
	b, err := bucket.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "create-sarif-upload:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewCreateSarifUpload(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg, Bucket: b}))
}
