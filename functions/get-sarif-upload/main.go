// Command get-sarif-upload is the Lambda of GET
// /api/pr/scan/sarif/uploads/{upload_id}.
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
		fmt.Fprintln(os.Stderr, "get-sarif-upload:", err)
		os.Exit(1)
	}
	lambda.Start(api.NewGetSarifUpload(api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}))
}
