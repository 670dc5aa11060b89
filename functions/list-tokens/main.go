// Command list-tokens is the Lambda of GET /api/auth/tokens (list tokens).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-tokens", api.NewListTokens, boot.Cursors) }
