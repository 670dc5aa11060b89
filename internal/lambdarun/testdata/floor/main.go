// Command floor is the least a Lambda that calls DynamoDB starts with:
// aws-lambda-go and a DynamoDB client built from the function's
// environment as the functions build theirs (region and static
// credentials, no default chain), answering "hello". It never calls
// DynamoDB. The cold-start bench runs it beside the baseline to show how
// much of a function's init the SDK's DynamoDB client alone takes.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	db := dynamodb.New(dynamodb.Options{Region: os.Getenv("AWS_REGION"),
		Credentials: credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))})
	_ = db
	lambda.Start(func(context.Context) (string, error) { return "hello", nil })
}
