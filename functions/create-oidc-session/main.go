// Command create-oidc-session is the Lambda of POST /api/auth/oidc/session
// (single sign-on: the code the organisation's OpenID provider sent back,
// exchanged for a session token).
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/sso"
)

func main() {
	f := boot.Open("create-oidc-session")
	s, err := sso.New(f.Config, keys.SSOClientSecret(os.Getenv), f.Egress().Client(sso.Timeout), f.Store, emailfold.Fold, time.Now)
	f.Check(err)
	lambda.Start(f.API(api.OIDCSession(s, f.Log).Handle))
}
