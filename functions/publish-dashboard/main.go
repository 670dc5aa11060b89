// Command publish-dashboard is the Lambda of the template's Dashboard
// custom resource: at each deployment it writes the dashboard's files, and
// a config.json naming the API, into the dashboard's bucket, and empties
// the bucket when the stack is deleted.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/bucket"
	"github.com/scangate/scangate/pkg/dashboard"
)

func main() {
	boot.Start("publish-dashboard", api.NewPublishDashboard, func(getenv func(string) string, d *api.Deps) error {
		c, err := bucket.NewClient(getenv)
		d.Dashboard = dashboard.Publisher{S3: c}
		return err
	})
}
