// Command create-token is the Lambda of POST /api/auth/tokens (create a personal token).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/emailfold"
)

func main() {
	f := boot.Open("create-token")
	lambda.Start(f.API(api.CreateToken(f.Store, emailfold.Fold, time.Now, f.Log).Handle))
}
