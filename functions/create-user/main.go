// Command create-user is the Lambda of POST /api/users (Create New User).
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
		fmt.Fprintln(os.Stderr, "create-user:", err)
		os.Exit(1)
	}
	lambda.Start(api.CreateUser(st, auth.HashPassword, time.Now, cfg.Logger(os.Stdout)).Handle)
}
