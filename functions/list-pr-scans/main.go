// Command list-pr-scans is the Lambda of GET /api/pr/{pr_id}/scans (a pull request's scans, paged).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-pr-scans", api.NewListPRScans, boot.Cursors) }
