// Command record-sarif is the Lambda of POST /api/pr/scan/sarif (record scans from a SARIF log).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("record-sarif")
	lambda.Start(f.API(api.RecordSARIF(f.Store, time.Now, f.Log).Handle))
}
