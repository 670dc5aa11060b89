// Command create-token is the Lambda of POST /api/auth/tokens (create a personal token).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("create-token", api.NewCreateToken) }
