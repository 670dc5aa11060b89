// Command get-me is the Lambda of GET /api/users/me (the caller's user).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-me")
	lambda.Start(f.API(api.GetMe(f.Store, f.Log).Handle))
}
