// Command update-user is the Lambda of PUT /api/users/{user_id} (Update Existing User).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/fold"
)

func main() {
	boot.Start("update-user", api.NewUpdateUser, func(_ func(string) string, d *api.Deps) error {
		d.Fold = fold.Fold
		return nil
	})
}
