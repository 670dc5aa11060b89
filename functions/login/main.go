// Command login is the Lambda of POST /api/auth/token.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	boot.Start("login", api.NewLogin, func(_ func(string) string, d *api.Deps) error {
		d.Passwords = password.Argon2id{}
		return nil
	})
}
