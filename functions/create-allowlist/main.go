// Command create-allowlist is the Lambda of POST /api/whitelist (create an allowlist).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("create-allowlist", api.NewCreateAllowlist) }
