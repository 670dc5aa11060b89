// Command exchange-oidc-token is the Lambda of POST /api/auth/oidc/token
// (a CI job's id token exchanged for a scan token of its repository).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/ciauth"
)

func main() {
	f := boot.Open("exchange-oidc-token")
	v := ciauth.NewVerifier(f.Egress().Client(ciauth.FetchTimeout), time.Now)
	lambda.Start(f.API(api.ExchangeOIDCToken(ciauth.Exchange{Store: f.Store, Verifier: v, Now: time.Now}, f.Log).Handle))
}
