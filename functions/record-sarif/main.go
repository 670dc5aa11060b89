// Command record-sarif is the Lambda of POST /api/pr/scan/sarif (record scans from a SARIF log).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("record-sarif", api.NewRecordSARIF) }
