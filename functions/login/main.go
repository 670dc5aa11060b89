// Command login is the Lambda of POST /api/auth/token.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("login")
	lambda.Start(f.API(api.Login(f.Store, password.Argon2id{}, f.Config.TokenTTL, time.Now, f.Log).Handle))
}
