// Command expire-allowlists is the Lambda an EventBridge schedule runs every minute to apply allowlists' expiries.
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
		fmt.Fprintln(os.Stderr, "expire-allowlists:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewExpireAllowlists(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
