// Command revoke-token is the Lambda of DELETE /api/auth/tokens/{token_id} (revoke a token).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("revoke-token")
	lambda.Start(f.API(api.RevokeToken(f.Store, time.Now, f.Log).Handle))
}
