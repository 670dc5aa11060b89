// Command get-pr is the Lambda of GET /api/pr/{pr_id} (a pull request).
package main

import (
	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() { boot.Start("get-pr", api.NewGetPR) }
