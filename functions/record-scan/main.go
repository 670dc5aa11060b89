// Command record-scan is the Lambda of POST /api/pr/scan (record a scan).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("record-scan")
	lambda.Start(f.API(api.RecordScan(f.Store, time.Now, f.Log).Handle))
}
