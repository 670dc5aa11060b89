// Command update-allowlist is the Lambda of PUT /api/whitelist/{whitelist_id} (Modify Allowlist).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "update-allowlist:", err)
		os.Exit(1)
	}
	db, err := store.NewClient(context.Background(), cfg.Endpoint)
	if err != nil {
		fmt.Fprintln(os.Stderr, "update-allowlist:", err)
		os.Exit(1)
	}
	lambda.Start(api.UpdateAllowlist(store.New(db, cfg.Table), time.Now, cfg.Logger(os.Stdout)).Handle)
}
