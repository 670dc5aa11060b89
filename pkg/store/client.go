package store

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/config"
)

// Retry policy of the SDK: at most 4 attempts with backoff capped at 1 s, so
// a throttled or failing request gives up within about 3 s and the caller
// gets 503 with Retry-After well inside API Gateway's 29 s.
const (
	sdkMaxAttempts = 4
	sdkMaxBackoff  = time.Second
)

// NewClient builds the DynamoDB client. With an endpoint (DynamoDB Local,
// the embedded server) it talks to that endpoint, with dummy credentials
// when none are configured; otherwise to AWS as the environment says.
func NewClient(ctx context.Context, endpoint string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRetryer(func() aws.Retryer {
			return sdkretry.NewStandard(func(o *sdkretry.StandardOptions) {
				o.MaxAttempts = sdkMaxAttempts
				o.MaxBackoff = sdkMaxBackoff
			})
		}),
	}
	if endpoint != "" {
		if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			opts = append(opts, awsconfig.WithRegion("us-east-1"))
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			// The embedded server sends no CRC32 header.
			o.DisableValidateResponseChecksum = true
		}
		for _, fn := range optFns {
			fn(o)
		}
	}), nil
}

// Open reads the configuration through getenv and builds the store on it:
// what every function's main does once, at init.
func Open(ctx context.Context, getenv func(string) string) (*Store, config.Config, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return nil, cfg, err
	}
	db, err := NewClient(ctx, cfg.Endpoint)
	if err != nil {
		return nil, cfg, err
	}
	return New(db, cfg.Table), cfg, nil
}
