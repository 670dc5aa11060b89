// Command record-scan is the Lambda of POST /api/pr/scan (record a scan).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("record-scan", api.NewRecordScan) }
