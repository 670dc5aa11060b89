// Command get-oidc-trust is the Lambda of GET /api/auth/oidc/trust/{name}.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-oidc-trust")
	lambda.Start(f.API(api.GetOIDCTrust(f.Store, f.Log).Handle))
}
