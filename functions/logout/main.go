// Command logout is the Lambda of DELETE /api/auth/token (log out).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("logout", api.NewLogout) }
