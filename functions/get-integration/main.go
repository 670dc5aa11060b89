// Command get-integration is the Lambda of GET /api/integrations/{vc_id}.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-integration")
	lambda.Start(f.API(api.GetIntegration(f.Store, f.Log).Handle))
}
