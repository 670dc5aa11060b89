// Command get-user is the Lambda of GET /api/users/{user_id} (a user).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-user", api.NewGetUser) }
