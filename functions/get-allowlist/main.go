// Command get-allowlist is the Lambda of GET /api/whitelist/{whitelist_id} (an allowlist and its comments).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-allowlist", api.NewGetAllowlist) }
