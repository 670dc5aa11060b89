// Command logout is the Lambda of DELETE /api/auth/token (log out).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
)

func main() {
	f := boot.Open("logout")
	lambda.Start(f.API(api.Logout(f.Store, time.Now, f.Log).Handle))
}
