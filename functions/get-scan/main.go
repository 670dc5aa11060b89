// Command get-scan is the Lambda of GET /api/pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-scan")
	lambda.Start(f.API(api.GetScan(f.Store, f.Log).Handle))
}
