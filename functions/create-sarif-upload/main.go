// Command create-sarif-upload is the Lambda of POST
// /api/pr/scan/sarif/uploads: it records an upload and presigns the PUT of
// its object to the uploads bucket.
package main

import (
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/bucket"
)

func main() {
	f := boot.Open("create-sarif-upload")
	b, err := bucket.Open(os.Getenv)
	f.Check(err)
	lambda.Start(f.API(api.CreateSARIFUpload(f.Store, b, time.Now, f.Log).Handle))
}
