package localstack_test

import (
	"fmt"
	"testing"
)

// TestRoleMatrix calls every route over HTTP as each role: 403 exactly
// where the role table of docs/API.md says no.
func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	_, api, dir := startStack(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	tokens := map[string]string{"admin": admin}
	for _, role := range []string{"user", "readonly"} {
		do(t, "POST", api+"/users", admin, fmt.Sprintf(`{"username":"as-%s","user_email":"%s@example.com","password":"password-123","role":"%s"}`, role, role, role))
		tokens[role] = loginToken(t, api, "as-"+role, "password-123")
	}
	do(t, "POST", api+"/whitelist", admin, `{"type":"SECRET","name":"x","reason":"revoked"}`)
	routes := []struct {
		method, path, body string
		allowed            []string
	}{
		{"GET", "/pr/scan/1", "", []string{"admin", "user", "readonly"}},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"g","vc_id":1,"vc_name":"v","repo_id":1,"repo_name":"o/r","webhook_id":1,"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"}}`, []string{"admin", "user"}},
		{"POST", "/whitelist", `{"type":"SECRET","name":"y","reason":"revoked"}`, []string{"admin", "user"}},
		{"POST", "/pr/scan/sarif/uploads", `{"vc_type":"g","vc_id":1,"vc_name":"v","repo_id":1,"repo_name":"o/r","webhook_id":1,"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"}}`, []string{"admin", "user"}},
		{"GET", "/pr/scan/sarif/uploads/1", "", []string{"admin", "user", "readonly"}},
		{"PUT", "/whitelist/1", `{"comment":"c"}`, []string{"admin", "user"}},
		{"POST", "/users", `{"username":"n%s","user_email":"n%s@example.com","password":"password-123","role":"readonly"}`, []string{"admin"}},
		{"PUT", "/users/2", `{"role":"user","active":true,"user_email":"user@example.com"}`, []string{"admin"}},
	}
	for _, r := range routes {
		for role, tok := range tokens {
			body := r.body
			if r.path == "/users" {
				body = fmt.Sprintf(r.body, role, role)
			}
			resp, b := do(t, r.method, api+r.path, tok, body)
			allowed := false
			for _, a := range r.allowed {
				allowed = allowed || a == role
			}
			if allowed && (resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode >= 500) || !allowed && resp.StatusCode != 403 {
				t.Errorf("%s %s as %s: %d %s", r.method, r.path, role, resp.StatusCode, b)
			}
		}
	}
}
