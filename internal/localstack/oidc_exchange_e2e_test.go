package localstack_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/oidctest"
)

const ciAudience = "https://scangate.test"

// exchanged is the answer of POST /auth/oidc/token.
type exchanged struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
	Repos       []struct {
		VcID   int64 `json:"vc_id"`
		RepoID int64 `json:"repo_id"`
	} `json:"repos"`
}

// exchange posts an id token to POST /auth/oidc/token (no bearer token).
func (e *eventStack) exchange(t *testing.T, idToken string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"id_token": idToken})
	resp, body := do(t, "POST", e.api+"/auth/oidc/token", "", string(b))
	return resp.StatusCode, body
}

// prScan is a recording of a PR scan of repository repoID of vc 1.
func prScan(repoID int64, pr int) string {
	return fmt.Sprintf(`{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"gh","repo_id":%d,"repo_name":"acme/api",`+
		`"webhook_id":1,"pr":{"pr_id":%d,"pr_name":"p","pr_link":"https://example.com/p"},"findings":[]}`, repoID, pr)
}

// TestOIDCTokenExchange: a CI job's id token, signed by a trusted
// issuer's published key, is exchanged for a scan token of the repository
// its claims name, which records that repository's scans and nothing of
// another's; it lives at most an hour and never past the id token, is
// listed with its owner's tokens and revocable, and its issue is audited
// with the trust and the subject.
func TestOIDCTokenExchange(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	is := oidctest.New(t)
	k1 := oidctest.RSAKey(t, "k1")
	is.Publish(k1)
	e.call(t, 200, "PUT", "/auth/oidc/trust/ci-acme", `{"issuer":"`+is.URL+`","audience":"`+ciAudience+`",`+
		`"repos":[{"vc_id":1,"repo_id":4242},{"vc_id":1,"repo_id":4343}],"conditions":{"ref":"refs/heads/*"}}`)

	now := e.clock.Now()
	status, body := e.exchange(t, oidctest.Sign(t, k1, jose.RS256, oidctest.GitHubClaims(is.URL, ciAudience, "4242", now)))
	var x exchanged
	if err := json.Unmarshal([]byte(body), &x); status != 200 || err != nil {
		t.Fatalf("exchange: %d %s", status, body)
	}
	e.logs.Secret(x.AccessToken)
	if !strings.HasPrefix(x.AccessToken, "sgt_1_") || x.TokenType != "Bearer" || x.Scope != "scan" ||
		len(x.Repos) != 1 || x.Repos[0].VcID != 1 || x.Repos[0].RepoID != 4242 {
		t.Errorf("exchanged %+v", x)
	}
	// Never past the id token's expiry (5 minutes).
	if x.ExpiresIn < 240 || x.ExpiresIn > 300 {
		t.Errorf("expires_in %d, want the id token's 5 minutes at most", x.ExpiresIn)
	}
	// It records its repository's scans, not another's (403, nothing
	// written), and may not create tokens or allowlists.
	if resp, b := do(t, "POST", e.api+"/pr/scan", x.AccessToken, prScan(4242, 1)); resp.StatusCode != 201 {
		t.Errorf("the CI token records its repository: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", e.api+"/pr/scan", x.AccessToken, prScan(4343, 2)); resp.StatusCode != 403 {
		t.Errorf("the CI token records another repository of its trust: %d %s", resp.StatusCode, b)
	}
	if resp, b := do(t, "POST", e.api+"/auth/tokens", x.AccessToken, `{"name":"more","scope":"scan"}`); resp.StatusCode != 403 {
		t.Errorf("the CI token creates a token: %d %s", resp.StatusCode, b)
	}
	if got := e.call(t, 200, "GET", "/pr?vc_id=1&repo_id=4343", ""); strings.Contains(got, `"pr_id"`) {
		t.Errorf("a PR of the other repository was written: %s", got)
	}
	// Listed with its owner's (the admin who put the trust) tokens.
	tokens := e.call(t, 200, "GET", "/auth/tokens", "")
	if !strings.Contains(tokens, `"kind":"ci"`) || !strings.Contains(tokens, `"name":"ci-acme"`) {
		t.Errorf("the admin's tokens: %s", tokens)
	}
	audit := e.call(t, 200, "GET", "/audit?action=token.create", "")
	if !strings.Contains(audit, `"trust":{"to":"ci-acme"}`) || !strings.Contains(audit, `"subject":{"to":"repo:acme/api:ref:refs/heads/main"}`) ||
		!strings.Contains(audit, `"kind":{"to":"ci"}`) {
		t.Errorf("the issue's audit entry: %s", audit)
	}

	// At most an hour, whatever the id token's expiry.
	long := oidctest.GitHubClaims(is.URL, ciAudience, "4343", now)
	long["exp"] = now.Add(3 * time.Hour).Unix()
	status, body = e.exchange(t, oidctest.Sign(t, k1, jose.RS256, long))
	var y exchanged
	if err := json.Unmarshal([]byte(body), &y); status != 200 || err != nil || y.ExpiresIn != 3600 || y.Repos[0].RepoID != 4343 {
		t.Fatalf("a 3-hour id token: %d %s", status, body)
	}
	e.logs.Secret(y.AccessToken)
	// Revocable, as any token.
	if resp, b := do(t, "GET", e.api+"/pr?vc_id=1&repo_id=4343", y.AccessToken, ""); resp.StatusCode != 200 {
		t.Fatalf("the second CI token: %d %s", resp.StatusCode, b)
	}
	var page struct {
		Items []struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
		} `json:"items"`
	}
	_ = json.Unmarshal([]byte(e.call(t, 200, "GET", "/auth/tokens", "")), &page)
	if len(page.Items) == 0 || page.Items[0].Kind != "ci" {
		t.Fatalf("the newest token: %+v", page)
	}
	e.call(t, 204, "DELETE", fmt.Sprintf("/auth/tokens/%d", page.Items[0].ID), "")
	if resp, _ := do(t, "GET", e.api+"/pr?vc_id=1&repo_id=4343", y.AccessToken, ""); resp.StatusCode != 401 {
		t.Errorf("a revoked CI token: %d", resp.StatusCode)
	}
}

// TestOIDCTokenRefusals: every id token that is not to be exchanged is
// 401, audited (oidc.token.refused, in the log of unauthenticated
// traffic, with the reason) and issues nothing: expired, not yet valid,
// for another audience, of another issuer, unsigned, HMAC-signed with the
// issuer's public key, of a key id the issuer does not publish, of a
// repository no trust allows, of claims no condition allows, replayed
// after its expiry, of a trust whose owner was deactivated. Bad bodies
// are 422 and audit nothing.
func TestOIDCTokenRefusals(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	is, other := oidctest.New(t), oidctest.New(t)
	k1, k2 := oidctest.RSAKey(t, "k1"), oidctest.RSAKey(t, "k2")
	is.Publish(k1)
	other.Publish(k2)
	e.call(t, 200, "PUT", "/auth/oidc/trust/ci-acme", `{"issuer":"`+is.URL+`","audience":"`+ciAudience+`",`+
		`"repos":[{"vc_id":1,"repo_id":4242}],"conditions":{"ref":"refs/heads/main"}}`)
	now := e.clock.Now()
	with := func(change func(map[string]any)) map[string]any {
		c := oidctest.GitHubClaims(is.URL, ciAudience, "4242", now)
		change(c)
		return c
	}
	hs256 := oidctest.HS256(oidctest.PublicPEM(t, k1))
	good := oidctest.Sign(t, k1, jose.RS256, with(func(map[string]any) {}))
	cases := []struct{ name, token, reason string }{
		{"expired", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })), "expired"},
		{"not yet valid", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), "nbf"},
		{"another audience", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["aud"] = "https://other.example.com" })), "audience"},
		{"an issuer no trust names", oidctest.Sign(t, k2, jose.RS256, oidctest.GitHubClaims(other.URL, ciAudience, "4242", now)), "no trust names the issuer"},
		{"another issuer's key", oidctest.Sign(t, k2, jose.RS256, with(func(map[string]any) {})), "signature"},
		{"alg none", oidctest.Forge(map[string]any{"alg": "none", "typ": "JWT"}, with(func(map[string]any) {}), func(string) []byte { return nil }), `algorithm \"none\"`},
		{"HMAC with the public key", oidctest.Forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}, with(func(map[string]any) {}), hs256), `algorithm \"HS256\"`},
		{"an unknown key id", oidctest.Sign(t, jose.JSONWebKey{Key: k2.Key, KeyID: "k9"}, jose.RS256, with(func(map[string]any) {})), "signature"},
		{"a repository no trust allows", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["repository_id"] = "9999" })), "does not name the repository 9999"},
		{"conditions not met", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["ref"] = "refs/pull/7/merge" })), "the claim ref does not match"},
		{"not a JWT", "abc.def", "not a signed JWT"},
	}
	refusals := func() int {
		return strings.Count(e.call(t, 200, "GET", "/audit?action=oidc.token.refused&limit=100", ""), `"action":"oidc.token.refused"`)
	}
	issued := func() int {
		return strings.Count(e.call(t, 200, "GET", "/audit?action=token.create&limit=100", ""), `"kind":{"to":"ci"}`)
	}
	for i, c := range cases {
		status, body := e.exchange(t, c.token)
		if status != 401 || !strings.Contains(body, `"status":401`) {
			t.Errorf("%s: %d %s, want 401", c.name, status, body)
		}
		audit := e.call(t, 200, "GET", "/audit?action=oidc.token.refused&limit=1", "")
		if n := refusals(); n != i+1 || !strings.Contains(audit, c.reason) {
			t.Errorf("%s: %d refusals audited, the last %s; want %d, with %q", c.name, n, audit, i+1, c.reason)
		}
	}
	// The refusal's entry says who it was (a verified token's subject)
	// and which issuer.
	if audit := e.call(t, 200, "GET", "/audit?target_type=oidc_issuer&target_id="+url.QueryEscape(is.URL), ""); !strings.Contains(audit, `"subject":{"to":"repo:acme/api:ref:refs/heads/main"}`) {
		t.Errorf("the issuer's refusals: %s", audit)
	}
	// Replayed after its expiry: taken once, refused 6 minutes later.
	if status, body := e.exchange(t, good); status != 200 {
		t.Fatalf("the good token: %d %s", status, body)
	}
	e.clock.Advance(6 * time.Minute)
	if status, body := e.exchange(t, good); status != 401 || !strings.Contains(body, "expired") {
		t.Errorf("replayed after its expiry: %d %s", status, body)
	}
	if n := issued(); n != 1 {
		t.Errorf("%d CI tokens issued, want the good token's alone", n)
	}
	// A trust whose owner (the admin who last put it) was deactivated
	// lets nothing in.
	e.call(t, 201, "POST", "/users", `{"username":"ada","user_email":"ada@example.com","password":"password-123","role":"admin"}`)
	ada := loginToken(t, e.api, "ada", "password-123")
	if resp, b := do(t, "PUT", e.api+"/auth/oidc/trust/ci-acme", ada, `{"issuer":"`+is.URL+`","audience":"`+ciAudience+`","repos":[{"vc_id":1,"repo_id":4242}]}`); resp.StatusCode != 200 {
		t.Fatalf("ada puts the trust: %d %s", resp.StatusCode, b)
	}
	e.call(t, 200, "PUT", "/users/2", `{"role":"admin","active":false,"user_email":"ada@example.com"}`)
	now = e.clock.Now()
	if status, body := e.exchange(t, oidctest.Sign(t, k1, jose.RS256, oidctest.GitHubClaims(is.URL, ciAudience, "4242", now))); status != 401 || !strings.Contains(body, "owner") {
		t.Errorf("a deactivated owner's trust: %d %s", status, body)
	}
	if n := issued(); n != 1 {
		t.Errorf("%d CI tokens issued, want 1", n)
	}
	// Bad bodies: 422, nothing audited.
	before := refusals()
	for _, b := range []string{`{}`, `{"id_token":5}`, `{"id_token":""}`, `{"id_token":"a.b.c","extra":1}`, `{"id_token":"` + strings.Repeat("a", 17<<10) + `"}`} {
		if resp, got := do(t, "POST", e.api+"/auth/oidc/token", "", b); resp.StatusCode != 422 && resp.StatusCode != 413 {
			t.Errorf("%.60s: %d %s, want 422", b, resp.StatusCode, got)
		}
	}
	if n := refusals(); n != before {
		t.Errorf("bad bodies audited %d refusals", n-before)
	}
}
