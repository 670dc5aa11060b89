package keys

import (
	"context"
	"errors"

	"github.com/scangate/scangate/internal/awsjson"
)

// Client reads secrets with Secrets Manager's GetSecretValue: one POST of
// its JSON 1.1 protocol through internal/awsjson, signed by the SDK's Signature
// Version 4 signer with the function's credentials. It is not the SDK's
// service/secretsmanager because that package's initialisation (its
// schemas and endpoint tables) costs every cold start of the functions
// that link it about 0.4 ms, a tenth of the floor, for one call an
// execution environment makes once (docs/DECISIONS.md).
type Client struct {
	c *awsjson.Client
}

// ClientFromEnv builds the client from what Lambda puts in a function's
// environment, as awsclient.DynamoDBFromEnv builds the DynamoDB client (the
// region, the role's credentials; no default chain), pointed at
// SECRETSMANAGER_ENDPOINT when that is set (tests).
func ClientFromEnv(getenv func(string) string) (*Client, error) {
	c, err := awsjson.FromEnv(getenv, awsjson.SecretsManager())
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// SecretString returns the SecretString of the secret id (an ARN or a
// name), its current version.
func (c *Client) SecretString(ctx context.Context, id string) (string, error) {
	var out struct{ SecretString *string }
	if err := c.c.Call(ctx, "secretsmanager.GetSecretValue", map[string]string{"SecretId": id}, &out); err != nil {
		return "", err
	}
	if out.SecretString == nil {
		return "", errors.New("GetSecretValue: the secret has no SecretString")
	}
	return *out.SecretString, nil
}

// Endpoint is Secrets Manager's endpoint in region.
func Endpoint(region string) string { return awsjson.Endpoint(awsjson.SecretsManager().Host, region) }
