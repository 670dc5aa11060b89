// Command baseline is the hello-world Lambda the functions are measured
// against: aws-lambda-go and the same DynamoDB client, nothing else.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/store"
)

func main() {
	db, err := store.NewClient(context.Background(), os.Getenv("DYNAMODB_ENDPOINT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
	_ = db
	lambda.Start(func(context.Context) (string, error) { return "hello", nil })
}
