// Package awsclient builds the AWS SDK clients of every function from what
// Lambda puts in its environment (region and the role's credentials), with
// scangate's retry policy and HTTP timeouts: DynamoDB for the store, and
// the region, credentials, retryer and HTTP client that the S3 bucket, the
// SQS queues, the EventBridge bus and the Secrets Manager client build
// theirs from. No adapter imports another adapter for its client.
package awsclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdkretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/scangate/scangate/internal/metrics"
)

// Retry policy of the SDK: at most 4 attempts with backoff capped at 1 s, so
// a throttled or failing request gives up within about 3 s and the caller
// gets 503 with Retry-After well inside API Gateway's 29 s.
const (
	sdkMaxAttempts = 4
	sdkMaxBackoff  = time.Second
)

// HTTP client of every scangate AWS client: DynamoDB, S3 and the awsjson
// services are regional endpoints in the function's own region, so a
// connection or TLS handshake that takes longer than this has failed and
// is better retried than waited for.
const (
	dialTimeout         = 3 * time.Second
	tlsHandshakeTimeout = 3 * time.Second
)

// NewRetryer is the SDK retry policy of scangate's SDK clients: DynamoDB
// and the S3 bucket (the awsjson clients retry by their own policy).
func NewRetryer() aws.Retryer {
	return sdkretry.NewStandard(func(o *sdkretry.StandardOptions) {
		o.MaxAttempts = sdkMaxAttempts
		o.MaxBackoff = sdkMaxBackoff
	})
}

// NewHTTPClient is the HTTP client of every scangate AWS client: DynamoDB,
// the S3 bucket, the awsjson clients (SQS, EventBridge, Secrets Manager)
// and scangate-admin's.
func NewHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = dialTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.TLSHandshakeTimeout = tlsHandshakeTimeout })
}

// UseEndpoint points a client at a DynamoDB-compatible endpoint (DynamoDB
// Local, the embedded server) instead of AWS; empty leaves it on AWS.
func UseEndpoint(endpoint string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if endpoint == "" {
			return
		}
		o.BaseEndpoint = aws.String(endpoint)
		// The embedded server sends no CRC32 header.
		o.DisableValidateResponseChecksum = true
	}
}

// DynamoDBFromEnv builds the DynamoDB client from what Lambda puts in a
// function's environment: AWS_REGION, and the role's credentials in
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. It reads
// no file and calls no credential endpoint, so a function links and starts
// without the SDK's default chain (docs/DECISIONS.md). With an endpoint it
// talks to that endpoint, with a placeholder region and credentials when
// the environment has none.
func DynamoDBFromEnv(getenv func(string) string, endpoint string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	region, creds, err := FromEnv(getenv, endpoint, "dynamodb")
	if err != nil {
		return nil, err
	}
	opts := dynamodb.Options{Region: region, Credentials: creds, Retryer: NewRetryer(), HTTPClient: NewHTTPClient()}
	return dynamodb.New(opts, append([]func(*dynamodb.Options){UseEndpoint(endpoint)}, optFns...)...), nil
}

// FromEnv reads the region and the credentials of an AWS client of
// service from a function's environment, as DynamoDBFromEnv describes.
func FromEnv(getenv func(string) string, endpoint, service string) (string, aws.CredentialsProvider, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if endpoint != "" {
		placeRegion, place := Placeholders()
		if region == "" {
			region = placeRegion
		}
		if id == "" {
			id, secret = place.AccessKeyID, place.SecretAccessKey
		}
	}
	switch {
	case region == "":
		return "", nil, fmt.Errorf("%s client: AWS_REGION is not set", service)
	case id == "" || secret == "":
		return "", nil, fmt.Errorf("%s client: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set", service)
	}
	return region, credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN")), nil
}

// Placeholders are the region and credentials a client of an endpoint
// signs with when the environment names none.
func Placeholders() (string, aws.Credentials) {
	return "us-east-1", aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}
}

// NewDynamoDB builds the DynamoDB client from this process's environment
// (DynamoDBFromEnv with os.Getenv), for the local stack and tests.
func NewDynamoDB(_ context.Context, endpoint string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	return DynamoDBFromEnv(os.Getenv, endpoint, optFns...)
}

// throttleCodes are the error codes the SDK's retryer treats as throttling.
var throttleCodes = sdkretry.ThrottleErrorCode{Codes: sdkretry.DefaultThrottleErrorCodes}

// CountThrottles has a client emit, through m, one DynamoDBThrottles
// metric (by operation) for every attempt DynamoDB throttled: a
// middleware inside the SDK's retry loop, so it sees each attempt the
// retryer will retry or give up on, not only the call's last error.
func CountThrottles(m *metrics.Emitter) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if m == nil {
			return
		}
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("scangate.CountThrottles",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleFinalize(ctx, in)
					if err != nil && throttleCodes.IsErrorThrottle(err) == aws.TrueTernary {
						m.Emit(ctx, []metrics.Dim{{Name: metrics.DimOperation, Value: middleware.GetOperationName(ctx)}},
							metrics.CountOf(metrics.DynamoDBThrottle, 1))
					}
					return out, md, err
				}), "Retry", middleware.After)
		})
	}
}
