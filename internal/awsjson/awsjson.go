// Package awsjson calls AWS APIs of the JSON protocols (awsJson1_0,
// awsJson1_1): one POST per call, signed by the SDK's Signature Version 4
// signer with the function's credentials, tried again after a network
// error, a throttle or a server error. The functions call SQS, EventBridge
// and Secrets Manager with it rather than with the SDK's clients of those
// services, whose package initialisation (their schemas and endpoint
// tables: 92 KB to 343 KB and 700 to 1,900 allocations each) every cold
// start of every function linking them would pay for a call or two
// (docs/DECISIONS.md, docs/BENCHMARKS.md); the signer, the credentials and
// the HTTP client are the SDK's, as the DynamoDB client has them.
package awsjson

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/scangate/scangate/internal/awsclient"
)

// Client calls one service.
type Client struct {
	// Endpoint is the service's URL in the region.
	Endpoint string
	Region   string
	// Service is the name requests are signed for ("sqs", "events").
	Service string
	// Version is the protocol's: "1.0" or "1.1".
	Version     string
	Credentials aws.CredentialsProvider
	HTTP        interface {
		Do(*http.Request) (*http.Response, error)
	}
	Signer *v4.Signer
	Now    func() time.Time
}

// Service says how to reach one service: the name it is signed for, the
// first label of its host, its protocol's version and the variable that
// points it at a compatible server (tests, the local stack).
type Service struct {
	Name, Host, Version, EndpointVar string
}

// SQS is Amazon SQS (the delivery and work queues).
func SQS() Service {
	return Service{Name: "sqs", Host: "sqs", Version: "1.0", EndpointVar: "SQS_ENDPOINT"}
}

// EventBridge is Amazon EventBridge (the stack's event bus).
func EventBridge() Service {
	return Service{Name: "events", Host: "events", Version: "1.1", EndpointVar: "EVENTBRIDGE_ENDPOINT"}
}

// SecretsManager is AWS Secrets Manager (the keys).
func SecretsManager() Service {
	return Service{Name: "secretsmanager", Host: "secretsmanager", Version: "1.1", EndpointVar: "SECRETSMANAGER_ENDPOINT"}
}

// attempts is how many times a call is tried: again after a network
// error, a throttle or a server error, as the SDK's standard retryer
// would.
const attempts = 3

// FromEnv builds a client of s from what Lambda puts in a function's
// environment, as awsclient.DynamoDBFromEnv builds the DynamoDB client (the
// region, the role's credentials; no default chain), pointed at
// s.EndpointVar when that is set.
func FromEnv(getenv func(string) string, s Service) (*Client, error) {
	endpoint := getenv(s.EndpointVar)
	region, creds, err := awsclient.FromEnv(getenv, endpoint, s.Name)
	if err != nil {
		return nil, err
	}
	if endpoint == "" {
		endpoint = Endpoint(s.Host, region)
	}
	return &Client{Endpoint: endpoint, Region: region, Service: s.Name, Version: s.Version, Credentials: creds,
		HTTP: awsclient.NewHTTPClient(), Signer: v4.NewSigner(), Now: time.Now}, nil
}

// Endpoint is a service's endpoint in region: amazonaws.com, or
// amazonaws.com.cn in the China regions.
func Endpoint(host, region string) string {
	h := host + "." + region + ".amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		h += ".cn"
	}
	return "https://" + h
}

// Error is an error the service answered.
type Error struct {
	Status int
	// Type is the error's type, after any namespace (ThrottlingException).
	Type, Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message) }

// retryable says whether a call that failed so may pass if tried again.
func (e *Error) retryable() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests || strings.Contains(e.Type, "Throttl")
}

// Call calls the operation target ("AmazonSQS.SendMessage") with in as
// its JSON, and decodes the answer into out (nil: ignored).
func (c *Client) Call(ctx context.Context, target string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	var last error
	for attempt := range attempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (after %v)", target, ctx.Err(), last)
			case <-time.After(time.Duration(attempt*attempt) * 100 * time.Millisecond):
			}
		}
		answer, err := c.once(ctx, target, body, hash)
		if err == nil {
			if out == nil || len(answer) == 0 {
				return nil
			}
			if err := json.Unmarshal(answer, out); err != nil {
				return fmt.Errorf("%s: read the answer: %w", target, err)
			}
			return nil
		}
		last = fmt.Errorf("%s: %w", target, err)
		var apiErr *Error
		if errors.As(err, &apiErr) && !apiErr.retryable() {
			return last
		}
	}
	return last
}

// once makes one request and returns the answer of a 200.
func (c *Client) once(ctx context.Context, target string, body []byte, hash string) ([]byte, error) {
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, &Error{Type: "Credentials", Message: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Type: "Request", Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-amz-json-"+c.Version)
	req.Header.Set("X-Amz-Target", target)
	if err := c.Signer.SignHTTP(ctx, creds, req, hash, c.Service, c.Region, c.Now()); err != nil {
		return nil, &Error{Type: "Sign", Message: err.Error()}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return answer, nil
	}
	var e struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	_ = json.Unmarshal(answer, &e)
	if e.Message == "" {
		e.Message = e.Message2
	}
	return nil, &Error{Status: resp.StatusCode, Type: e.Type[strings.LastIndex(e.Type, "#")+1:], Message: e.Message}
}
