// Command record-sarif is the Lambda of POST /api/pr/scan/sarif (record scans from a SARIF log).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record-sarif:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewRecordSARIF(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
