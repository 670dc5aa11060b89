// Command update-user is the Lambda of PUT /api/users/{user_id} (Update Existing User).
package main

import (
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/emailfold"
)

func main() {
	f := boot.Open("update-user")
	lambda.Start(f.API(api.UpdateUser(f.Store, emailfold.Fold, time.Now, f.Log).Handle))
}
