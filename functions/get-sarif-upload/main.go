// Command get-sarif-upload is the Lambda of GET
// /api/pr/scan/sarif/uploads/{upload_id}.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-sarif-upload", api.NewGetSarifUpload) }
