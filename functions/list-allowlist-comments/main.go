// Command list-allowlist-comments is the Lambda of GET /api/whitelist/{whitelist_id}/comments.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
)

func main() {
	f := boot.Open("list-allowlist-comments")
	lambda.Start(api.ListAllowlistComments(f.Store, f.Log).Handle)
}
