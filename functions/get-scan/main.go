// Command get-scan is the Lambda of GET /api/pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-scan", api.NewGetScan) }
