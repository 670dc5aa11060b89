// Command put-integration is the Lambda of PUT /api/integrations/{vc_id}
// (commit statuses; the token sealed, never shown).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/keys"
	"github.com/scangate/scangate/pkg/seal"
)

func main() {
	f := boot.Open("put-integration")
	lambda.Start(f.API(api.PutIntegration(f.Store, seal.Lazy(keys.SecretsKey(f.Env)), f.Egress().WithPrivate(f.Config.PrivateIntegrations), time.Now, f.Log).Handle))
}
