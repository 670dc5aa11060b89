// Command create-user is the Lambda of POST /api/users (Create New User).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/fold"
)

func main() {
	boot.Start("create-user", api.NewCreateUser, func(_ func(string) string, d *api.Deps) error {
		d.Passwords, d.Fold = password.Argon2id{}, fold.Fold
		return nil
	})
}
