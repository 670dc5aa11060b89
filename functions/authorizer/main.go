// Command authorizer is the Lambda TOKEN authorizer of the API.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("authorizer", api.NewAuthorizer) }
