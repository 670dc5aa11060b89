// Command authorizer is the Lambda TOKEN authorizer of the API.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "authorizer:", err)
		os.Exit(1)
	}
	a := auth.Authorizer{Store: st, Now: time.Now, Log: cfg.Logger(os.Stdout)}
	lambda.Start(a.Handle)
}
