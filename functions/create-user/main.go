// Command create-user is the Lambda of POST /api/users (Create New User).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/fold"
)

func main() {
	f := boot.Open("create-user")
	lambda.Start(f.API(api.CreateUser(f.Store, password.Argon2id{}, fold.Fold, time.Now, f.Log).Handle))
}
