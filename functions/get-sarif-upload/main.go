// Command get-sarif-upload is the Lambda of GET
// /api/pr/scan/sarif/uploads/{upload_id}.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("get-sarif-upload")
	lambda.Start(f.API(api.GetSARIFUpload(f.Store, f.Log).Handle))
}
