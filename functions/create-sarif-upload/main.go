// Command create-sarif-upload is the Lambda of POST
// /api/pr/scan/sarif/uploads: it records an upload and presigns the PUT of
// its object to the uploads bucket.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/bucket"
)

func main() {
	boot.Start("create-sarif-upload", api.NewCreateSarifUpload, func(getenv func(string) string, d *api.Deps) error {
		b, err := bucket.Open(getenv)
		d.Bucket = b
		return err
	})
}
