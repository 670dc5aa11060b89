// Command get-me is the Lambda of GET /api/users/me (the caller's user).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-me", api.NewGetMe) }
