package keys

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/scangate/scangate/internal/store"
)

// Client reads secrets with Secrets Manager's GetSecretValue: one POST of
// its JSON 1.1 protocol, signed by the SDK's Signature Version 4 signer
// with the function's credentials. It is written here rather than taken
// from the SDK's service/secretsmanager because that package's
// initialisation (its schemas and endpoint tables) costs every cold start
// of the 13 functions that link it about 0.4 ms, a tenth of the floor, for
// one call an execution environment makes once (docs/DECISIONS.md); the
// signer, the credentials and the HTTP client are the SDK's, as the
// DynamoDB client has them.
type Client struct {
	// Endpoint is Secrets Manager's URL in the region.
	Endpoint    string
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        interface {
		Do(*http.Request) (*http.Response, error)
	}
	Signer *v4.Signer
	Now    func() time.Time
}

// attempts is how many times a read is tried: again after a network
// error, a throttle or a server error, as the SDK's standard retryer
// would.
const attempts = 3

// ClientFromEnv builds the client from what Lambda puts in a function's
// environment, as store.ClientFromEnv builds the DynamoDB client (the
// region, the role's credentials; no default chain), pointed at
// SECRETSMANAGER_ENDPOINT when that is set (tests).
func ClientFromEnv(getenv func(string) string) (*Client, error) {
	endpoint := getenv("SECRETSMANAGER_ENDPOINT")
	region, creds, err := store.FromEnv(getenv, endpoint, "secretsmanager")
	if err != nil {
		return nil, err
	}
	if endpoint == "" {
		endpoint = Endpoint(region)
	}
	return &Client{Endpoint: endpoint, Region: region, Credentials: creds, HTTP: store.NewHTTPClient(),
		Signer: v4.NewSigner(), Now: time.Now}, nil
}

// Endpoint is Secrets Manager's endpoint in region: amazonaws.com, or
// amazonaws.com.cn in the China regions.
func Endpoint(region string) string {
	host := "secretsmanager." + region + ".amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		host += ".cn"
	}
	return "https://" + host
}

// SecretString returns the SecretString of the secret id (an ARN or a
// name), its current version.
func (c *Client) SecretString(ctx context.Context, id string) (string, error) {
	body, err := json.Marshal(map[string]string{"SecretId": id})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(body)
	var last error
	for attempt := range attempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("%w (after %v)", ctx.Err(), last)
			case <-time.After(time.Duration(attempt*attempt) * 100 * time.Millisecond):
			}
		}
		s, retry, err := c.read(ctx, body, hex.EncodeToString(sum[:]))
		if err == nil || !retry {
			return s, err
		}
		last = err
	}
	return "", last
}

// read makes one request, and says whether its failure may pass if tried
// again.
func (c *Client) read(ctx context.Context, body []byte, hash string) (string, bool, error) {
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return "", false, fmt.Errorf("credentials: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
	if err := c.Signer.SignHTTP(ctx, creds, req, hash, "secretsmanager", c.Region, c.Now()); err != nil {
		return "", false, fmt.Errorf("sign: %w", err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", true, err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", true, err
	}
	var out struct {
		SecretString *string
		Type         string `json:"__type"`
		Message      string `json:"message"`
	}
	_ = json.Unmarshal(answer, &out)
	switch {
	case resp.StatusCode == http.StatusOK && out.SecretString != nil:
		return *out.SecretString, false, nil
	case resp.StatusCode == http.StatusOK:
		return "", false, fmt.Errorf("the secret has no SecretString")
	}
	// The error's type, after any namespace (aws.protocol#Type).
	kind := out.Type[strings.LastIndex(out.Type, "#")+1:]
	retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || strings.Contains(kind, "Throttling")
	return "", retry, fmt.Errorf("GetSecretValue: %d %s: %s", resp.StatusCode, kind, out.Message)
}
