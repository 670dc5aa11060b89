// Command get-scan is the Lambda of GET /api/pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "get-scan:", err)
		os.Exit(1)
	}
	db, err := store.NewClient(context.Background(), cfg.Endpoint)
	if err != nil {
		fmt.Fprintln(os.Stderr, "get-scan:", err)
		os.Exit(1)
	}
	lambda.Start(api.GetScan(store.New(db, cfg.Table), cfg.Logger(os.Stdout)).Handle)
}
