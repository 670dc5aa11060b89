// Command get-scan is the Lambda of GET /api/pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("get-scan")
	lambda.Start(f.API(api.GetScan(f.Store, f.Log).Handle))
}
