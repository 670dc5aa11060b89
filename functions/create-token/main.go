// Command create-token is the Lambda of POST /api/auth/tokens (create a personal token).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/fold"
)

func main() {
	f := boot.Open("create-token")
	lambda.Start(f.API(api.CreateToken(f.Store, fold.Fold, time.Now, f.Log).Handle))
}
