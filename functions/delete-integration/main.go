// Command delete-integration is the Lambda of DELETE /api/integrations/{vc_id}
// (commit statuses of that vc_id no longer posted).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("delete-integration")
	lambda.Start(f.API(api.DeleteIntegration(f.Store, time.Now, f.Log).Handle))
}
