// Command delete-oidc-trust is the Lambda of DELETE
// /api/auth/oidc/trust/{name}.
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("delete-oidc-trust")
	lambda.Start(f.API(api.DeleteOIDCTrust(f.Store, time.Now, f.Log).Handle))
}
