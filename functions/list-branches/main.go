// Command list-branches is the Lambda of GET /api/branches (a repository's branches by name, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-branches")
	lambda.Start(f.API(api.ListBranches(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
