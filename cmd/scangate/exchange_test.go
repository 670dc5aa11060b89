package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// exchange answers POST /auth/oidc/token as the service does: no bearer
// token; the id token it knows is exchanged for testToken, any other is
// 401.
func (f *fakeAPI) exchange(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		IDToken string `json:"id_token"`
	}
	if r.Header.Get("Authorization") != "" || json.Unmarshal(body, &in) != nil || f.idToken == "" || in.IDToken != f.idToken {
		problem(w, 401, "the id token is refused: no trust lets it in (its repository or its claims)")
		return
	}
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":300,"scope":"scan","repos":[{"vc_id":1,"repo_id":186853002}]}`, testToken)
}

// tokenService stands in for GitHub Actions' id token service: GET with
// the request token as a bearer token and the audience as a parameter,
// {"value": id token} back (403 without id-token: write).
type tokenService struct {
	srv       *httptest.Server
	mu        sync.Mutex
	audiences []string
	status    int
}

const (
	requestToken = "gh-request-token-never-printed"
	ghIDToken    = "eyJhbGciOiJSUzI1NiJ9.gh-id-token.never-printed"
	glIDToken    = "eyJhbGciOiJSUzI1NiJ9.gl-id-token.never-printed"
)

func newTokenService(t *testing.T) *tokenService {
	ts := &tokenService{status: 200}
	ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+requestToken || r.URL.Query().Get("api-version") != "2.0" || ts.status != 200 {
			w.WriteHeader(max(ts.status, 403))
			return
		}
		ts.audiences = append(ts.audiences, r.URL.Query().Get("audience"))
		fmt.Fprintf(w, `{"count":1,"value":%q}`, ghIDToken)
	}))
	t.Cleanup(ts.srv.Close)
	return ts
}

// ciWithoutToken is a GitHub Actions job on the recorded pull_request
// event with no SCANGATE_TOKEN.
func ciWithoutToken(t *testing.T, api string) cli {
	c := github(t, api)
	delete(c.env, "SCANGATE_TOKEN")
	return c
}

func (c cli) with(kv ...string) cli {
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	c.env = env
	return c
}

// noSecrets fails when out prints an id token or GitHub's request token.
func noSecrets(t *testing.T, out ...string) {
	t.Helper()
	for _, o := range out {
		for _, s := range []string{requestToken, ghIDToken, glIDToken} {
			if strings.Contains(o, s) {
				t.Errorf("printed %q:\n%s", s, o)
			}
		}
	}
}

// TestTrustedCIGitHub: without SCANGATE_TOKEN, on GitHub Actions with
// id-token: write, the CLI asks GitHub for an id token of the audience
// (scangate, or SCANGATE_OIDC_AUDIENCE), exchanges it (POST
// /auth/oidc/token, no bearer token) and calls the service with the scan
// token; it never prints either token.
func TestTrustedCIGitHub(t *testing.T) {
	f := newFakeAPI(t)
	f.idToken = ghIDToken
	ts := newTokenService(t)
	c := ciWithoutToken(t, f.url()).with("ACTIONS_ID_TOKEN_REQUEST_URL", ts.srv.URL+"/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", requestToken)
	code, out, errOut := c.run(t, "gate")
	if code != exitBlocked || !strings.Contains(errOut, "the id token of GitHub Actions exchanged for a scan token of repository 1/186853002, valid 5m0s") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	noSecrets(t, out, errOut)
	if got := f.sent(); len(got) != 3 || got[0] != "POST /api/auth/oidc/token" || got[2] != "GET /api/pr/7/gate" {
		t.Errorf("requests %v", got)
	}
	code, _, errOut = c.with("SCANGATE_OIDC_AUDIENCE", "https://scangate.example.com").run(t, "gate")
	if code != exitBlocked {
		t.Fatalf("with an audience: exit %d, %s", code, errOut)
	}
	if fmt.Sprint(ts.audiences) != "[scangate https://scangate.example.com]" {
		t.Errorf("audiences asked for: %v", ts.audiences)
	}
	// SCANGATE_TOKEN, when set, is used as it is: no id token asked for.
	if code, _, _ := c.with("SCANGATE_TOKEN", testToken).run(t, "gate"); code != exitBlocked || len(ts.audiences) != 2 {
		t.Errorf("with SCANGATE_TOKEN: exit %d, %d id tokens asked for", code, len(ts.audiences))
	}
	// Refused by the service: the problem's detail, exit 2.
	f.idToken = "another"
	code, out, errOut = c.run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "exchanging the id token of GitHub Actions for a scan token") || !strings.Contains(errOut, "no trust lets it in") {
		t.Errorf("refused: exit %d, %q", code, errOut)
	}
	noSecrets(t, out, errOut)
	// A job without id-token: write: GitHub answers 403.
	ts.status = 403
	code, _, errOut = c.run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "id-token: write") {
		t.Errorf("no permission: exit %d, %q", code, errOut)
	}
}

// TestTrustedCIGitLab: without SCANGATE_TOKEN, a GitLab job's id token in
// SCANGATE_ID_TOKEN (its id_tokens) is exchanged; with neither an id
// token nor a token the usage error says how to get one.
func TestTrustedCIGitLab(t *testing.T) {
	f := newFakeAPI(t)
	f.idToken = glIDToken
	c := ciWithoutToken(t, f.url()).with("SCANGATE_ID_TOKEN", glIDToken)
	code, out, errOut := c.run(t, "gate")
	if code != exitBlocked || !strings.Contains(errOut, "the id token of SCANGATE_ID_TOKEN exchanged") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	noSecrets(t, out, errOut)
	code, _, errOut = ciWithoutToken(t, f.url()).run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "no token") || !strings.Contains(errOut, "id-token: write") || !strings.Contains(errOut, "SCANGATE_ID_TOKEN") {
		t.Errorf("no token at all: exit %d, %q", code, errOut)
	}
}
