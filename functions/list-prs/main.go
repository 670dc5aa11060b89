// Command list-prs is the Lambda of GET /api/pr (pull requests by last scan, paged).
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
	if err == nil {
		err = cfg.NeedCursorKey()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "list-prs:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewListPRs(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
