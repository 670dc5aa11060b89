package localstack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

// TestInvoke runs functions through Stack.Invoke, as Lambda would and as
// the local triggers that are not API Gateway do: event JSON in, answer
// JSON out, by logical id.
func TestInvoke(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := stack.Invoke(ctx, "LoginFunction", []byte(`{"httpMethod":"POST","path":"/api/auth/token","resource":"/api/auth/token",
		"headers":{"Content-Type":"application/json"},"body":"{\"username\":\"admin\",\"password\":\"admin-password-1\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, `"access_token"`) {
		t.Fatalf("login through Invoke: %s, %v", out, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal([]byte(resp.Body), &tok)
	ev, _ := json.Marshal(map[string]string{"type": "TOKEN", "authorizationToken": "Bearer " + tok.AccessToken,
		"methodArn": "arn:aws:execute-api:us-east-1:123456789012:local/prod/GET/api/pr/scan/1"})
	out, err = stack.Invoke(ctx, "AuthorizerFunction", ev)
	if err != nil || !strings.Contains(string(out), `"principalId":"1"`) || !strings.Contains(string(out), `"Allow"`) {
		t.Fatalf("authorizer through Invoke: %s, %v", out, err)
	}
	if _, err := stack.Invoke(ctx, "NoSuchFunction", []byte(`{}`)); err == nil {
		t.Fatal("invoking an unknown function succeeded")
	}
}
