// Command get-scan is the Lambda of GET /api/pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
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
		fmt.Fprintln(os.Stderr, "get-scan:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewGetScan(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
