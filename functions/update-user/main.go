// Command update-user is the Lambda of PUT /api/users/{user_id} (Update Existing User).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/fold"
	"github.com/scangate/scangate/pkg/store"
)

func main() {
	st, cfg, err := store.Open(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "update-user:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewUpdateUser(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg, Fold: fold.Fold}))
}
