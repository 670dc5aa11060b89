package localstack_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
	"github.com/scangate/scangate/internal/oidctest"
)

// The trusted-CI tests with a real OpenID provider (node's oidc-provider,
// make test-oidc): id tokens it signs with its own keys are exchanged;
// tokens forged against its published keys are refused.

// payloadOf is the claims of a compact JWT, unverified.
func payloadOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err != nil || json.Unmarshal(b, &claims) != nil {
		t.Fatalf("not a JWT: %v", err)
	}
	return claims
}

// TestOIDCProviderExchange: an id token the provider signs for the
// trust's audience, naming the trust's repository, is exchanged and
// records that repository's scans; each refusal, with tokens the
// provider signs and tokens forged against its published key, is 401
// and audited: another audience, an issuer no trust names, a repository
// no trust allows, a condition not met, unsigned, HMAC
// with the provider's public key, a key it does not publish under its
// key id, an unknown key id, a tampered payload, replayed after expiry.
// (The provider signs no nbf it is given: a token not yet valid is
// TestOIDCTokenRefusals', forged.)
func TestOIDCProviderExchange(t *testing.T) {
	t.Parallel()
	prov := oidctest.StartProvider(t, ciAudience, "https://other.example.com")
	e := startEvents(t)
	e.call(t, 200, "PUT", "/auth/oidc/trust/provider", `{"issuer":"`+prov.URL+`","audience":"`+ciAudience+`",`+
		fmt.Sprintf(`"repos":[{"vc_id":1,"repo_id":%d}],"conditions":{"repository":"Codertocat/*"}}`, cienvtest.GitHubRepoID))

	good := prov.IDToken(t, ciAudience, nil)
	status, body := e.exchange(t, good)
	var x exchanged
	if err := json.Unmarshal([]byte(body), &x); status != 200 || err != nil || x.Repos[0].RepoID != cienvtest.GitHubRepoID || x.ExpiresIn > 600 {
		t.Fatalf("the provider's id token: %d %s", status, body)
	}
	e.logs.Secret(x.AccessToken)
	if resp, b := do(t, "POST", e.api+"/pr/scan", x.AccessToken, prScan(cienvtest.GitHubRepoID, 2)); resp.StatusCode != 201 {
		t.Errorf("record with the exchanged token: %d %s", resp.StatusCode, b)
	}

	// The provider's public key, as it publishes it.
	keys := prov.Keys(t)
	if len(keys.Keys) != 1 || keys.Keys[0].KeyID != prov.KeyID {
		t.Fatalf("the provider's keys: %+v", keys)
	}
	hs256 := oidctest.HS256(oidctest.PublicPEM(t, keys.Keys[0]))
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	claims := payloadOf(t, good)
	parts := strings.Split(good, ".")
	other := claims["repository_id"]
	claims["repository_id"] = "1"
	tamperedPayload, _ := json.Marshal(claims)
	claims["repository_id"] = other
	untrusted := oidctest.StartProvider(t, ciAudience)

	cases := []struct{ name, token, reason string }{
		{"another audience", prov.IDToken(t, "https://other.example.com", nil), "audience"},
		{"an issuer no trust names", untrusted.IDToken(t, ciAudience, nil), "no trust names the issuer"},
		{"a repository no trust allows", prov.IDToken(t, ciAudience, map[string]any{"repository_id": "1"}), "does not name the repository 1"},
		{"a condition not met", prov.IDToken(t, ciAudience, map[string]any{"repository": "Mallory/evil"}), "the claim repository does not match"},
		{"alg none", oidctest.Forge(map[string]any{"alg": "none", "typ": "JWT"}, claims, func(string) []byte { return nil }), `algorithm \"none\"`},
		{"HMAC with the provider's public key", oidctest.Forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": prov.KeyID}, claims, hs256), `algorithm \"HS256\"`},
		{"a key it does not publish, under its key id", oidctest.Sign(t, jose.JSONWebKey{Key: stranger, KeyID: prov.KeyID}, jose.RS256, claims), "signature"},
		{"an unknown key id", oidctest.Sign(t, jose.JSONWebKey{Key: stranger, KeyID: "not-published"}, jose.RS256, claims), "signature"},
		{"a tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString(tamperedPayload) + "." + parts[2], "signature"},
	}
	for i, c := range cases {
		status, body := e.exchange(t, c.token)
		audit := e.call(t, 200, "GET", "/audit?action=oidc.token.refused&limit=1", "")
		n := strings.Count(e.call(t, 200, "GET", "/audit?action=oidc.token.refused&limit=100", ""), `"action":"oidc.token.refused"`)
		if status != 401 || n != i+1 || !strings.Contains(audit, c.reason) {
			t.Errorf("%s: %d %s; %d refusals audited, the last %s; want 401 and %q", c.name, status, body, n, audit, c.reason)
		}
	}
	// Replayed after its expiry (the provider's id tokens live 10
	// minutes).
	e.clock.Advance(11 * time.Minute)
	if status, body := e.exchange(t, good); status != 401 || !strings.Contains(body, "expired") {
		t.Errorf("replayed after its expiry: %d %s", status, body)
	}
	if n := strings.Count(e.call(t, 200, "GET", "/audit?action=token.create&limit=100", ""), `"kind":{"to":"ci"}`); n != 1 {
		t.Errorf("%d CI tokens issued, want 1", n)
	}
}

// TestOIDCProviderCLI: a GitHub Actions job with id-token: write and no
// stored secret (no SCANGATE_TOKEN) uploads its SARIF with scangate
// upload: the client asks the provider, standing in for GitHub's token
// service, for an id token of the default audience, exchanges it and
// records the pull request's scan.
func TestOIDCProviderCLI(t *testing.T) {
	t.Parallel()
	prov := oidctest.StartProvider(t, "scangate")
	e := startCLI(t)
	if resp, b := do(t, "PUT", e.api+"/auth/oidc/trust/github", e.admin, `{"issuer":"`+prov.URL+`","audience":"scangate",`+
		fmt.Sprintf(`"repos":[{"vc_id":1,"repo_id":%d}],"conditions":{"event_name":"pull_request"}}`, cienvtest.GitHubRepoID)); resp.StatusCode != 200 {
		t.Fatalf("trust: %d %s", resp.StatusCode, b)
	}
	j := e.github(t, "")
	delete(j.env, "SCANGATE_TOKEN")
	j.env["ACTIONS_ID_TOKEN_REQUEST_URL"], j.env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = prov.RequestURL(), prov.RequestToken
	code, out, errOut := e.run(t, j, "upload", "--no-gate", e.file(t, "gitleaks.sarif", gitleaksLog(cliSecret)))
	if code != 0 || !strings.Contains(out, "recorded (inline): 1 result: 1 recorded") ||
		!strings.Contains(errOut, fmt.Sprintf("exchanged for a scan token of repository 1/%d", cienvtest.GitHubRepoID)) {
		t.Fatalf("upload: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut+e.log.String(), prov.RequestToken) {
		t.Errorf("the request token was printed or logged")
	}
	if prs := e.prs(t, 1, cienvtest.GitHubRepoID); len(prs) != 1 || prs[0]["secret_count"] != float64(1) {
		t.Fatalf("the PR as recorded: %v", prs)
	}
	// Without id-token: write (no request variables) and no token: the
	// usage error says how.
	delete(j.env, "ACTIONS_ID_TOKEN_REQUEST_URL")
	if code, _, errOut := e.run(t, j, "upload", "--no-gate", "gitleaks.sarif"); code != 2 || !strings.Contains(errOut, "id-token: write") {
		t.Errorf("no id token: exit %d %s", code, errOut)
	}
}
