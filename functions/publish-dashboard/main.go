// Command publish-dashboard is the Lambda of the template's Dashboard
// custom resource: at each deployment it writes the dashboard's files, and
// a config.json naming the API, into the dashboard's bucket, and empties
// the bucket when the stack is deleted. It uses no table, so it builds no
// store.
package main

import (
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/trigger"
)

func main() {
	f := boot.OpenWithoutStore("publish-dashboard")
	s3, err := bucket.NewClient(os.Getenv)
	f.Check(err)
	lambda.Start(trigger.PublishDashboard(dashboard.Publisher{S3: s3}, f.Log))
}
