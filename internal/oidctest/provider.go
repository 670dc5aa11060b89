package oidctest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Provider is a real OpenID provider run for a test: node's oidc-provider
// (npm, pinned in .ci/oidc-provider) serving .ci/oidc-provider/issuer.mjs
// on loopback. make test-oidc installs it into .build/oidc-provider and
// sets SCANGATE_OIDC_PROVIDER to that directory, so CI fails when it is
// missing; without either, the tests that need it are skipped.
type Provider struct {
	URL   string // its issuer
	KeyID string // the key id it signs with
	// RequestToken is what GET /ci-token wants as a bearer token (GitHub
	// Actions' ACTIONS_ID_TOKEN_REQUEST_TOKEN).
	RequestToken string
}

// root is the repository's root.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// StartProvider starts the provider with a client for each audience (the
// audiences it may sign id tokens for); it stops when the test ends.
func StartProvider(t testing.TB, audiences ...string) *Provider {
	t.Helper()
	dir := os.Getenv("SCANGATE_OIDC_PROVIDER")
	if dir == "" {
		dir = filepath.Join(root(), ".build", "oidc-provider")
		if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil { // npm ci done
			t.Skip("no OpenID provider: run make test-oidc (or set SCANGATE_OIDC_PROVIDER)")
		}
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		t.Fatal(err)
	}
	p := &Provider{RequestToken: hex.EncodeToString(secret[:])}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "issuer.mjs"), p.RequestToken}, audiences...)...)
	cmd.Stderr = io.Discard // its warnings about a development setup
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the OpenID provider: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var ready struct {
		Issuer string `json:"issuer"`
		Kid    string `json:"kid"`
	}
	if err != nil || json.Unmarshal([]byte(line), &ready) != nil || ready.Issuer == "" {
		t.Fatalf("the OpenID provider did not start: %q %v", line, err)
	}
	p.URL, p.KeyID = ready.Issuer, ready.Kid
	return p
}

// RequestURL is the provider's stand-in of GitHub Actions'
// ACTIONS_ID_TOKEN_REQUEST_URL.
func (p *Provider) RequestURL() string { return p.URL + "/ci-token?api-version=2.0" }

// IDToken has the provider sign an id token for audience with the job's
// claims changed by claims (nil: a GitHub Actions job on a pull request
// of repository 186853002).
func (p *Provider) IDToken(t testing.TB, audience string, claims map[string]any) string {
	t.Helper()
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"audience": {audience}}
	if claims != nil {
		q.Set("claims", string(c))
	}
	req, err := http.NewRequest(http.MethodGet, p.URL+"/ci-token?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.RequestToken)
	hc := http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Value string `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.Value == "" {
		t.Fatalf("the provider's id token for %s: %d %v", audience, resp.StatusCode, err)
	}
	return out.Value
}

// Keys are the keys the provider publishes (its jwks_uri).
func (p *Provider) Keys(t testing.TB) jose.JSONWebKeySet {
	t.Helper()
	hc := http.Client{Timeout: 30 * time.Second}
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	get := func(u string, out any) {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	get(p.URL+"/.well-known/openid-configuration", &doc)
	var set jose.JSONWebKeySet
	get(doc.JWKSURI, &set)
	return set
}
