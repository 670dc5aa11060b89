// Command login is the Lambda of POST /api/auth/token.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "login:", err)
		os.Exit(1)
	}
	l := auth.Login{Store: st, TokenTTL: cfg.TokenTTL, Now: time.Now}
	lambda.Start(api.Login(l, cfg.Logger(os.Stdout)).Handle)
}
