// Command list-findings is the Lambda of GET /api/pr/scan/{pr_scan_id}/findings (a scan's findings, paged).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-findings", api.NewListFindings, boot.Cursors) }
