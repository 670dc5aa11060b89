// Command list-users is the Lambda of GET /api/users (users, paged).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("list-users", api.NewListUsers, boot.Cursors) }
