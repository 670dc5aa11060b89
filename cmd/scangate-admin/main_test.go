package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestAdminCLI runs every subcommand against a fresh table.
func TestAdminCLI(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	vars := map[string]string{}
	admin := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"-table", env.Table, "-endpoint", env.Endpoint}, args...), strings.NewReader(stdin), &out,
			func(name string) string { return vars[name] })
		return out.String(), err
	}
	if out, err := admin("", "create-table"); err != nil || !strings.Contains(out, "ready") {
		t.Fatalf("create-table on an existing table: %q, %v", out, err)
	}
	out, err := admin("", "bootstrap", "-username", "root", "-email", "root@example.com")
	if err != nil || !strings.Contains(out, "id 1") || !strings.Contains(out, "password (shown once): ") {
		t.Fatalf("bootstrap: %q, %v", out, err)
	}
	if _, err := admin("", "bootstrap", "-username", "root2", "-email", "root2@example.com"); err == nil {
		t.Fatal("a second bootstrap succeeded")
	}
	out, err = admin("", "issue-token", "-username", "ROOT", "-name", "ci deploy", "-days", "2", "-scope", "read")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if !strings.Contains(lines[0], `"ci deploy"`) || !strings.Contains(lines[0], "read") {
		t.Errorf("issue-token said %q", out)
	}
	if _, err := admin("", "issue-token", "-username", "ROOT", "-name", "CI DEPLOY"); err == nil {
		t.Error("a second token named alike ignoring case was issued")
	}
	a := auth.Authorizer{Store: env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	valid := func(token string) bool {
		_, err := a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token, MethodArn: "arn:aws:execute-api:r:1:a/s/GET/x"})
		return err == nil
	}
	if !valid(token) {
		t.Fatal("the issued token is refused")
	}

	// revoke-token never takes the token on its command line.
	if _, err := admin("", "revoke-token", "-token", token); err == nil || !valid(token) {
		t.Fatalf("revoke-token -token was accepted (%v)", err)
	}
	if _, err := admin("", "revoke-token", token); err == nil || !valid(token) {
		t.Fatalf("revoke-token with the token as an argument was accepted (%v)", err)
	}
	if _, err := admin("", "revoke-token"); err == nil || !strings.Contains(err.Error(), "SCANGATE_TOKEN") {
		t.Fatalf("revoke-token without a token: %v", err)
	}
	if _, err := admin("sgt_1_notatoken\n", "revoke-token"); err == nil || !valid(token) {
		t.Fatalf("revoke-token of a malformed token: %v", err)
	}
	// From standard input.
	if out, err := admin(token+"\n", "revoke-token"); err != nil || out != "token revoked\n" {
		t.Fatalf("revoke-token from stdin: %q, %v", out, err)
	}
	if valid(token) {
		t.Fatal("a revoked token still works")
	}
	if _, err := admin(token+"\n", "revoke-token"); err != nil {
		t.Fatalf("revoking a revoked token again: %v", err)
	}
	// From the environment, which wins over standard input.
	out, _ = admin("", "issue-token", "-username", "root", "-name", "second")
	token = strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	vars["SCANGATE_TOKEN"] = token
	if out, err := admin("garbage\n", "revoke-token"); err != nil || out != "token revoked\n" {
		t.Fatalf("revoke-token from SCANGATE_TOKEN: %q, %v", out, err)
	}
	if valid(token) {
		t.Fatal("a token revoked through SCANGATE_TOKEN still works")
	}
	delete(vars, "SCANGATE_TOKEN")

	out, _ = admin("", "issue-token", "-username", "root", "-name", "second")
	token = strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	if out, err := admin("", "revoke-user-tokens", "-username", "root"); err != nil || !strings.HasPrefix(out, "1 tokens") { // the others were revoked already
		t.Fatalf("revoke-user-tokens: %q, %v", out, err)
	}
	if valid(token) {
		t.Fatal("a token survived revoke-user-tokens")
	}
	if _, err := admin("", "issue-token", "-username", "nobody"); err == nil {
		t.Fatal("issue-token for an unknown user succeeded")
	}
	if out, err := admin("", "check"); err != nil || !strings.Contains(out, ": 0 drift") {
		t.Fatalf("check: %q, %v", out, err)
	}
	// An allowlist whose re-evaluation has not run yet: its work is
	// running, and what it is to correct is pending, not drift.
	if _, _, err := env.Store.RecordScan(ctx, scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v", RepoID: 2,
		RepoName: "o/r", WebhookID: 3, PR: scangate.PRRef{Number: 4, Name: "n", Link: "l"}, Status: "completed",
		Findings: []scangate.Finding{{Name: "sha256:aa"}}}, scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa",
		Active: true, Global: true}}, "", scangate.Who{RequestID: "test"}, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if out, err := admin("", "check"); err != nil || !strings.Contains(out, "running: work 1 (allowlist)") ||
		!strings.Contains(out, "differences the running work is to correct") || !strings.Contains(out, ": 0 drift") {
		t.Fatalf("check with work running: %q, %v", out, err)
	}

	// Each command has only its own flags.
	for _, args := range [][]string{
		{"issue-token", "-username", "root", "-email", "x@example.com"},
		{"bootstrap", "-username", "x", "-email", "x@example.com", "-ttl", "1h"},
		{"check", "-username", "root"},
		{"create-table", "extra"},
	} {
		if _, err := admin("", args...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if _, err := admin("", "frobnicate"); err == nil {
		t.Fatal("an unknown command succeeded")
	}
}

// TestBootstrapPasswordFromEnvironment: a chosen password is used and never printed.
func TestBootstrapPasswordFromEnvironment(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var out bytes.Buffer
	getenv := func(name string) string {
		if name == "SCANGATE_ADMIN_PASSWORD" {
			return "chosen-password-1"
		}
		return ""
	}
	err := run(context.Background(), []string{"-table", env.Table, "-endpoint", env.Endpoint, "bootstrap", "-username", "root", "-email", "root@example.com"},
		strings.NewReader(""), &out, getenv)
	if err != nil || strings.Contains(out.String(), "chosen-password-1") || strings.Contains(out.String(), "password") {
		t.Fatalf("bootstrap: %q, %v", out.String(), err)
	}
	l := auth.Login{Store: env.Store, Passwords: password.Argon2id{}, TokenTTL: time.Hour, Now: time.Now}
	if _, err := l.Login(context.Background(), "root", "chosen-password-1", scangate.Who{RequestID: "test"}); err != nil {
		t.Fatalf("the admin cannot log in with the chosen password: %v", err)
	}
}

// TestLinksNoLocalStack: the admin CLI, which runs against deployed tables,
// links neither the embedded DynamoDB server, the local API Gateway nor YAML.
func TestLinksNoLocalStack(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, d := range deps {
		for _, banned := range []string{"github.com/truora/minidyn", "gopkg.in/yaml.v3", "github.com/scangate/scangate/internal/localstack/gateway", "github.com/scangate/scangate/internal/localstack"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("scangate-admin links %s", d)
			}
		}
	}
}
