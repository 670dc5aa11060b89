// Command revoke-token is the Lambda of DELETE /api/auth/tokens/{token_id} (revoke a token).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("revoke-token", api.NewRevokeToken) }
