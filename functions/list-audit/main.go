// Command list-audit is the Lambda of GET /api/audit (the audit log).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-audit", api.NewListAudit, boot.Cursors) }
