// Command get-reevaluation is the Lambda of GET /api/reevaluations/{reevaluation_id} (the re-evaluation an allowlist change or expiry left: its progress, and its exact counts once complete).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-reevaluation")
	lambda.Start(f.API(api.GetReevaluation(f.Store, f.Log).Handle))
}
