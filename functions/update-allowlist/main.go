// Command update-allowlist is the Lambda of PUT /api/whitelist/{whitelist_id} (Modify Allowlist).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("update-allowlist", api.NewUpdateAllowlist) }
