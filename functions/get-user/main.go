// Command get-user is the Lambda of GET /api/users/{user_id} (a user).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-user")
	lambda.Start(f.API(api.GetUser(f.Store, f.Log).Handle))
}
