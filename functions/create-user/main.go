// Command create-user is the Lambda of POST /api/users (Create New User).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/fold"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "create-user:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewCreateUser(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg, Passwords: password.Argon2id{}, Fold: fold.Fold}))
}
