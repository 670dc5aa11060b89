// Command baseline is the hello-world Lambda the functions are measured
// against: aws-lambda-go and a DynamoDB client built the usual way, through
// the SDK's default chain (config.LoadDefaultConfig), answering "hello".
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg)
	_ = db
	lambda.Start(func(context.Context) (string, error) { return "hello", nil })
}
