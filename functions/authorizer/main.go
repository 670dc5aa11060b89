// Command authorizer is the Lambda TOKEN authorizer of the API.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("authorizer")
	lambda.Start(api.Authorizer(f.Store, time.Now, f.Log))
}
