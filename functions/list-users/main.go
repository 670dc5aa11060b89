// Command list-users is the Lambda of GET /api/users (users, paged).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/keys"
)

func main() {
	f := boot.Open("list-users")
	lambda.Start(f.API(api.ListUsers(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))
}
