// Command put-oidc-trust is the Lambda of PUT /api/auth/oidc/trust/{name}
// (which CI id tokens may be exchanged for scan tokens).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("put-oidc-trust")
	lambda.Start(f.API(api.PutOIDCTrust(f.Store, f.Egress(), time.Now, f.Log).Handle))
}
