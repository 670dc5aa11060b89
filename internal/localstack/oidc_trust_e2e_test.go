package localstack_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOIDCTrustLifecycle: an admin puts, reads, replaces and deletes a
// trust of CI id tokens through the local API Gateway, each change
// audited with what changed; bad bodies and names are 422 with a pointer
// and store nothing; other roles get 403.
func TestOIDCTrustLifecycle(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	const put = `{"issuer":"https://token.actions.githubusercontent.com","audience":"scangate",` +
		`"repos":[{"vc_id":1,"repo_id":42}],"conditions":{"ref":"refs/heads/main","repository":"acme/**"}}`
	type trust struct {
		Name       string            `json:"name"`
		Issuer     string            `json:"issuer"`
		Audience   string            `json:"audience"`
		Repos      []map[string]int  `json:"repos"`
		Conditions map[string]string `json:"conditions"`
		UpdatedBy  int64             `json:"updated_by"`
	}
	var got trust
	if err := json.Unmarshal([]byte(e.call(t, 200, "PUT", "/auth/oidc/trust/gh-acme", put)), &got); err != nil {
		t.Fatal(err)
	}
	want := trust{Name: "gh-acme", Issuer: "https://token.actions.githubusercontent.com", Audience: "scangate",
		Repos: []map[string]int{{"vc_id": 1, "repo_id": 42}}, Conditions: map[string]string{"ref": "refs/heads/main", "repository": "acme/**"}, UpdatedBy: 1}
	var read trust
	_ = json.Unmarshal([]byte(e.call(t, 200, "GET", "/auth/oidc/trust/gh-acme", "")), &read)
	for _, g := range []trust{got, read} {
		b1, _ := json.Marshal(g)
		b2, _ := json.Marshal(want)
		if string(b1) != string(b2) {
			t.Errorf("trust %s, want %s", b1, b2)
		}
	}
	audit := e.call(t, 200, "GET", "/audit?action=oidc.trust.put", "")
	if !strings.Contains(audit, `"id":"gh-acme"`) || !strings.Contains(audit, `"repos":{"to":"1/42"}`) {
		t.Errorf("audit after put: %s", audit)
	}
	// A replacement without conditions: none kept.
	repl := e.call(t, 200, "PUT", "/auth/oidc/trust/gh-acme",
		`{"issuer":"https://gitlab.example.com","audience":"sg","repos":[{"vc_id":2,"repo_id":7},{"vc_id":2,"repo_id":8}]}`)
	if !strings.Contains(repl, `"conditions":{}`) || !strings.Contains(repl, `"repo_id":8`) {
		t.Errorf("replaced: %s", repl)
	}

	// Bad input: 422 with a pointer, nothing stored.
	for _, c := range []struct{ path, body, pointer string }{
		{"/auth/oidc/trust/new", `{"audience":"a","repos":[{"vc_id":1,"repo_id":1}]}`, "/issuer"},
		{"/auth/oidc/trust/new", `{"issuer":"ftp://example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}]}`, "/issuer"},
		{"/auth/oidc/trust/new", `{"issuer":"https://169.254.169.254","audience":"a","repos":[{"vc_id":1,"repo_id":1}]}`, "/issuer"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"","repos":[{"vc_id":1,"repo_id":1}]}`, "/audience"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[]}`, "/repos"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a"}`, "/repos"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[` + strings.Repeat(`{"vc_id":1,"repo_id":1},`, 100) + `{"vc_id":1,"repo_id":2}]}`, "/repos"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":0,"repo_id":1}]}`, "/repos/0/vc_id"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1},{"vc_id":1,"repo_id":1}]}`, "/repos/1"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}],"conditions":{"ref":"refs/[heads"}}`, "/conditions/ref"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}],"conditions":{"ref":7}}`, "/conditions"},
		{"/auth/oidc/trust/new", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}],"extra":1}`, "/extra"},
		{"/auth/oidc/trust/Bad_Name", `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}]}`, "/name"},
		{"/auth/oidc/trust/" + strings.Repeat("a", 65), `{"issuer":"https://x.example.com","audience":"a","repos":[{"vc_id":1,"repo_id":1}]}`, "/name"},
	} {
		resp, body := do(t, "PUT", e.api+c.path, e.admin, c.body)
		if resp.StatusCode != 422 || !strings.Contains(body, `"pointer":"`+c.pointer+`"`) {
			t.Errorf("PUT %s %.100s: %d %s, want 422 at %s", c.path, c.body, resp.StatusCode, body, c.pointer)
		}
	}
	e.call(t, 404, "GET", "/auth/oidc/trust/new", "")
	if n := strings.Count(e.call(t, 200, "GET", "/audit?action=oidc.trust.put", ""), `"action":"oidc.trust.put"`); n != 2 {
		t.Errorf("%d oidc.trust.put entries, want 2 (refused requests audit nothing)", n)
	}

	// Only admins.
	e.call(t, 201, "POST", "/users", `{"username":"uma","user_email":"uma@example.com","password":"password-123","role":"user"}`)
	user := loginToken(t, e.api, "uma", "password-123")
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if resp, body := do(t, m, e.api+"/auth/oidc/trust/gh-acme", user, put); resp.StatusCode != 403 {
			t.Errorf("%s as a user: %d %s", m, resp.StatusCode, body)
		}
	}
	if got := e.call(t, 200, "GET", "/auth/oidc/trust/gh-acme", ""); !strings.Contains(got, `"issuer":"https://gitlab.example.com"`) {
		t.Errorf("after a user's refused PUT: %s", got)
	}

	e.call(t, 204, "DELETE", "/auth/oidc/trust/gh-acme", "")
	e.call(t, 404, "GET", "/auth/oidc/trust/gh-acme", "")
	e.call(t, 404, "DELETE", "/auth/oidc/trust/gh-acme", "")
	del := e.call(t, 200, "GET", "/audit?action=oidc.trust.delete", "")
	if strings.Count(del, `"action":"oidc.trust.delete"`) != 1 || !strings.Contains(del, `"issuer":{"from":"https://gitlab.example.com"}`) {
		t.Errorf("audit after delete: %s", del)
	}
	if n := strings.Count(e.call(t, 200, "GET", "/audit?target_type=oidc_trust&target_id=gh-acme", ""), `"id":"gh-acme"`); n != 3 {
		t.Errorf("%d audit entries of the trust gh-acme, want 3 (put, put, delete)", n)
	}
}
