// Command list-prs is the Lambda of GET /api/pr (pull requests by last scan, paged).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-prs", api.NewListPRs, boot.Cursors) }
