// Command put-integration is the Lambda of PUT /api/integrations/{vc_id}
// (commit statuses; the token sealed, never shown).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("put-integration")
	lambda.Start(f.API(api.PutIntegration(f.Store, f.Box(), f.Egress().WithPrivate(f.Config.PrivateIntegrations), time.Now, f.Log).Handle))
}
