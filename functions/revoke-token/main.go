// Command revoke-token is the Lambda of DELETE /api/auth/tokens/{token_id} (revoke a token).
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
		fmt.Fprintln(os.Stderr, "revoke-token:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewRevokeToken(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
