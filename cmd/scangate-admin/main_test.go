package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/ddbtest"
)

// TestAdminCLI runs every subcommand against a fresh table. It sets the
// process's environment (t.Setenv), so it does not run in parallel.
func TestAdminCLI(t *testing.T) {
	env := ddbtest.New(t)
	ctx := context.Background()
	admin := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"-table", env.Table, "-endpoint", env.Endpoint}, args...), &out)
		return out.String(), err
	}
	if out, err := admin("create-table"); err != nil || !strings.Contains(out, "ready") {
		t.Fatalf("create-table on an existing table: %q, %v", out, err)
	}
	t.Setenv("SCANGATE_ADMIN_PASSWORD", "")
	out, err := admin("bootstrap", "-username", "root", "-email", "root@example.com")
	if err != nil || !strings.Contains(out, "id 1") || !strings.Contains(out, "password (shown once): ") {
		t.Fatalf("bootstrap: %q, %v", out, err)
	}
	if _, err := admin("bootstrap", "-username", "root2", "-email", "root2@example.com"); err == nil {
		t.Fatal("a second bootstrap succeeded")
	}
	token, err := admin("issue-token", "-username", "ROOT", "-ttl", "2h")
	if err != nil {
		t.Fatal(err)
	}
	token = strings.TrimSpace(token)
	a := auth.Authorizer{Store: env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	check := func() error {
		_, err := a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token, MethodArn: "arn:aws:execute-api:r:1:a/s/GET/x"})
		return err
	}
	if err := check(); err != nil {
		t.Fatalf("the issued token is refused: %v", err)
	}
	if out, err := admin("revoke-token", "-token", token); err != nil || out != "token revoked\n" {
		t.Fatalf("revoke-token: %q, %v", out, err)
	}
	if err := check(); err == nil {
		t.Fatal("a revoked token still works")
	}
	token, _ = admin("issue-token", "-username", "root")
	token = strings.TrimSpace(token)
	if out, err := admin("revoke-user-tokens", "-username", "root"); err != nil || !strings.HasPrefix(out, "2 tokens") {
		t.Fatalf("revoke-user-tokens: %q, %v", out, err)
	}
	if err := check(); err == nil {
		t.Fatal("a token survived revoke-user-tokens")
	}
	if _, err := admin("issue-token", "-username", "nobody"); err == nil {
		t.Fatal("issue-token for an unknown user succeeded")
	}
	if _, err := admin("frobnicate"); err == nil {
		t.Fatal("an unknown command succeeded")
	}
}
