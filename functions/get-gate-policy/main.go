// Command get-gate-policy is the Lambda of GET /api/gate/policy (the global gate policy).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-gate-policy")
	lambda.Start(f.API(api.GetGatePolicy(f.Store, f.Log).Handle))
}
