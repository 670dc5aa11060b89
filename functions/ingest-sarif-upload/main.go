// Command ingest-sarif-upload is the Lambda that S3's ObjectCreated events
// of the uploads prefix invoke: it records each uploaded SARIF log and
// sets its upload's status.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/bucket"
)

func main() {
	boot.Start("ingest-sarif-upload", api.NewIngestSarifUpload, func(getenv func(string) string, d *api.Deps) error {
		b, err := bucket.Open(getenv)
		d.Bucket = b
		return err
	})
}
