// Command put-integration is the Lambda of PUT /api/integrations/{vc_id}
// (commit statuses; the token sealed, never shown).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/seal"
)

func main() {
	f := boot.Open("put-integration")
	lambda.Start(f.API(api.PutIntegration(f.Store, seal.Lazy(keys.SecretsKey(f.Env)), f.Egress().WithPrivate(f.Config.PrivateIntegrations), time.Now, f.Log).Handle))
}
