// Command list-allowlists is the Lambda of GET /api/whitelist (allowlists, paged).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-allowlists", api.NewListAllowlists, boot.Cursors) }
