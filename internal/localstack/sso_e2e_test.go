package localstack_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/oidcprovider"
)

// The client of the local stack at the test provider.
const (
	ssoClient   = "scangate-local"
	ssoSecret   = "local-client-secret-0123456789abcdef"
	ssoRedirect = "http://127.0.0.1:9/"
)

// startSSOProvider starts the test provider (node oidc-provider) with the
// local stack's client, and returns it and the stack's configuration of
// single sign-on: sec-team are admins, developers users, auditors
// readonly.
func startSSOProvider(t *testing.T) (*oidcprovider.Provider, config.SSO) {
	t.Helper()
	p := oidcprovider.Start(t, oidcprovider.Options{Clients: []oidcprovider.Client{{
		ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{ssoRedirect},
		GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
	}}})
	return p, config.SSO{Issuer: p.Issuer, ClientID: ssoClient, ClientSecret: ssoSecret,
		Roles: `{"admins":["sec-team"],"users":["developers"],"readonly":["auditors"]}`}
}

func randomString(t testing.TB) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// ssoSignIn signs login in at the provider (its development form), as the
// dashboard does (PKCE S256, state, nonce), and posts the code to POST
// /auth/oidc/session of api: the answer's status and body.
func ssoSignIn(t testing.TB, p *oidcprovider.Provider, api, login string) (int, string) {
	t.Helper()
	ctx := context.Background()
	discovered, err := oidc.NewProvider(ctx, p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	state, nonce, verifier := randomString(t), randomString(t), oauth2.GenerateVerifier()
	conf := oauth2.Config{ClientID: ssoClient, Endpoint: discovered.Endpoint(), RedirectURL: ssoRedirect, Scopes: []string{"openid", "email", "profile", "groups"}}
	back, err := p.SignIn(ctx, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), login)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Logs())
	}
	if back.Query().Get("state") != state {
		t.Fatalf("the provider sent back %s", back)
	}
	b, _ := json.Marshal(map[string]string{"code": back.Query().Get("code"), "code_verifier": verifier, "redirect_uri": ssoRedirect, "nonce": nonce})
	resp, body := do(t, "POST", api+"/auth/oidc/session", "", string(b))
	return resp.StatusCode, body
}

// TestSSOThroughTheLocalStack: through make run's server, with single
// sign-on on and password login off: a mapped admin signs in and is an
// admin (GET /users/me), a readonly person is readonly and refused an
// admin's write, a person in no mapped group is refused 403, the admin reads the
// refusal in the audit log, and the password login of the bootstrap admin
// is refused 403.
func TestSSOThroughTheLocalStack(t *testing.T) {
	t.Parallel()
	p, sso := startSSOProvider(t)
	env := ddbtest.New(t)
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: 3600e9, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), SSO: sso, PasswordLoginOff: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	srv := httptest.NewServer(stack.Handler)
	t.Cleanup(srv.Close)
	api := srv.URL + "/api"

	tokens := map[string]string{}
	for login, role := range map[string]string{"alice": "admin", "rita": "readonly"} {
		status, body := ssoSignIn(t, p, api, login)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", login, status, body)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
		}
		if err := json.Unmarshal([]byte(body), &tok); err != nil || tok.ExpiresIn != 3600 {
			t.Fatalf("%s: %s", login, body)
		}
		tokens[login] = tok.AccessToken
		resp, me := do(t, "GET", api+"/users/me", tok.AccessToken, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(me, `"role":"`+role+`"`) || !strings.Contains(me, `"username":"`+login+`"`) {
			t.Errorf("%s: GET /users/me %d %s, want role %s", login, resp.StatusCode, me, role)
		}
	}
	if resp, body := do(t, "POST", api+"/users", tokens["rita"], `{"username":"eve","user_email":"eve@example.com","password":"eve-password-1","role":"admin"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a readonly person created a user: %d %s", resp.StatusCode, body)
	}
	if status, body := ssoSignIn(t, p, api, "mallory"); status != http.StatusForbidden || !strings.Contains(body, "none of the groups") {
		t.Errorf("mallory (no mapped group): %d %s, want 403", status, body)
	}
	resp, audit := do(t, "GET", api+"/audit?action=sso.refused", tokens["alice"], "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(audit, `"id":"mallory"`) || !strings.Contains(audit, "no mapped group") {
		t.Errorf("the refusal in the audit log: %d %s", resp.StatusCode, audit)
	}
	resp, body := do(t, "POST", api+"/auth/token", "", `{"username":"admin","password":"admin-password-1"}`)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "single sign-on") {
		t.Errorf("password login switched off: %d %s, want 403", resp.StatusCode, body)
	}
}
