// Command create-user is the Lambda of POST /api/users (Create New User).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/emailfold"
)

func main() {
	f := boot.Open("create-user")
	lambda.Start(f.API(api.CreateUser(f.Store, password.Argon2id{}, emailfold.Fold, time.Now, f.Log).Handle))
}
