// Command expire-allowlists is the Lambda an EventBridge schedule runs every minute to apply allowlists' expiries.
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("expire-allowlists", api.NewExpireAllowlists) }
