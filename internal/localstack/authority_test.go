package localstack_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStaleRoleIsCheckedAtWrite: with the authorizer's answer cached for
// 300 s, an admin demoted after its first call can no longer create an
// admin (403, nothing written), and a deactivated user can no longer
// record a scan (401, nothing written); reads may still use the cached
// answer.
func TestStaleRoleIsCheckedAtWrite(t *testing.T) {
	t.Parallel()
	_, api, dir := startStack(t, 300*time.Second)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	for _, u := range []string{`{"username":"bea","user_email":"bea@example.com","password":"password-123","role":"admin"}`,
		`{"username":"carl","user_email":"carl@example.com","password":"password-123","role":"user"}`} {
		if resp, body := do(t, "POST", api+"/users", admin, u); resp.StatusCode != 201 {
			t.Fatalf("create: %d %s", resp.StatusCode, body)
		}
	}
	bea, carl := loginToken(t, api, "bea", "password-123"), loginToken(t, api, "carl", "password-123")
	for _, tok := range []string{bea, carl} { // the authorizer's answer is now cached
		if resp, _ := do(t, "GET", api+"/pr/scan/1", tok, ""); resp.StatusCode != 200 {
			t.Fatalf("read: %d", resp.StatusCode)
		}
	}
	do(t, "PUT", api+"/users/2", admin, `{"role":"readonly","active":true,"user_email":"bea@example.com"}`)
	do(t, "PUT", api+"/users/3", admin, `{"role":"user","active":false,"user_email":"carl@example.com"}`)

	resp, body := do(t, "POST", api+"/users", bea, `{"username":"eve","user_email":"eve@example.com","password":"password-123","role":"admin"}`)
	if resp.StatusCode != 403 || !strings.Contains(body, `"status":403`) {
		t.Errorf("a demoted admin creating an admin: %d %s", resp.StatusCode, body)
	}
	scan := `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":99,"pr_name":"n","pr_link":"l"}}`
	resp, body = do(t, "POST", api+"/pr/scan", carl, scan)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("a deactivated user recording a scan: %d %s", resp.StatusCode, body)
	}
	// Nothing was written: no user eve, no scan 13 (12 are seeded).
	if resp, _ := do(t, "POST", api+"/auth/token", "", `{"username":"eve","password":"password-123"}`); resp.StatusCode != 401 {
		t.Errorf("eve exists: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", api+"/pr/scan/13", admin, ""); resp.StatusCode != 404 {
		t.Errorf("scan 13 exists: %d", resp.StatusCode)
	}
	// The cached answer still serves reads until the TTL passes.
	if resp, _ := do(t, "GET", api+"/pr/scan/1", carl, ""); resp.StatusCode != 200 {
		t.Errorf("a cached read: %d", resp.StatusCode)
	}
}

// TestReactivationRevivesNoToken: tokens issued before a deactivation stay

// TestWriteChecksThePresentedToken: with the authorizer's answer cached
// for 300 s, a write checks the token it presents, not only its user: a
// logged-out token mints no personal token and records no scan, a
// personal token revoked by an admin creates no allowlist, and a token of
// a user deactivated then reactivated writes nothing (401 each, nothing
// written); each token still reads from the cache.
func TestWriteChecksThePresentedToken(t *testing.T) {
	t.Parallel()
	_, api, dir := startStack(t, 300*time.Second)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	for _, u := range []string{"uma", "vic"} {
		if resp, body := do(t, "POST", api+"/users", admin, `{"username":"`+u+`","user_email":"`+u+`@example.com","password":"password-123","role":"user"}`); resp.StatusCode != 201 {
			t.Fatalf("create %s: %d %s", u, resp.StatusCode, body)
		}
	}
	uma, vic := loginToken(t, api, "uma", "password-123"), loginToken(t, api, "vic", "password-123")
	resp, body := do(t, "POST", api+"/auth/tokens", uma, `{"name":"ci"}`)
	if resp.StatusCode != 201 {
		t.Fatalf("personal token: %d %s", resp.StatusCode, body)
	}
	personal := regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(body)[1]
	personalID := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)[1]
	loggedOut := loginToken(t, api, "uma", "password-123")
	for _, tok := range []string{loggedOut, personal, vic} { // the authorizer's answer is now cached
		if resp, _ := do(t, "GET", api+"/pr/scan/1", tok, ""); resp.StatusCode != 200 {
			t.Fatalf("read: %d", resp.StatusCode)
		}
	}
	if resp, body := do(t, "DELETE", api+"/auth/token", loggedOut, ""); resp.StatusCode != 204 {
		t.Fatalf("logout: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "DELETE", api+"/auth/tokens/"+personalID, admin, ""); resp.StatusCode != 204 {
		t.Fatalf("admin revokes: %d %s", resp.StatusCode, body)
	}
	for _, active := range []string{"false", "true"} {
		if resp, body := do(t, "PUT", api+"/users/3", admin, `{"role":"user","active":`+active+`,"user_email":"vic@example.com"}`); resp.StatusCode != 200 {
			t.Fatalf("update vic: %d %s", resp.StatusCode, body)
		}
	}

	scan := `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":99,"pr_name":"n","pr_link":"l"}}`
	for _, c := range []struct{ name, token, method, path, body string }{
		{"a logged-out token minting a personal token", loggedOut, "POST", "/auth/tokens", `{"name":"persist","expires_in_days":366}`},
		{"a logged-out token recording a scan", loggedOut, "POST", "/pr/scan", scan},
		{"a revoked personal token creating an allowlist", personal, "POST", "/whitelist", `{"type":"SECRET","name":"sha256:aa","global_":true}`},
		{"a token from before a deactivation recording a scan", vic, "POST", "/pr/scan", scan},
		{"a token from before a deactivation creating an allowlist", vic, "POST", "/whitelist", `{"type":"SECRET","name":"sha256:bb","global_":true}`},
	} {
		resp, body := do(t, c.method, api+c.path, c.token, c.body)
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, `"status":401`) {
			t.Errorf("%s: %d %s; want 401", c.name, resp.StatusCode, body)
		}
	}
	// Nothing was written: no token named persist, no scan 13 (12 are
	// seeded), no allowlist.
	for _, path := range []string{"/auth/tokens?user_id=2", "/whitelist"} {
		if resp, body := do(t, "GET", api+path, admin, ""); resp.StatusCode != 200 || strings.Contains(body, "persist") || strings.Contains(body, "sha256:") {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, "GET", api+"/pr/scan/13", admin, ""); resp.StatusCode != 404 {
		t.Errorf("scan 13 exists: %d", resp.StatusCode)
	}
	// The cached answers still serve reads until the TTL passes.
	for _, tok := range []string{loggedOut, personal, vic} {
		if resp, _ := do(t, "GET", api+"/pr/scan/1", tok, ""); resp.StatusCode != 200 {
			t.Errorf("a cached read: %d", resp.StatusCode)
		}
	}
}

// invalid after the user is reactivated; a new login works.
func TestReactivationRevivesNoToken(t *testing.T) {
	t.Parallel()
	_, api, dir := startStack(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	do(t, "POST", api+"/users", admin, `{"username":"dora","user_email":"dora@example.com","password":"password-123","role":"user"}`)
	old := loginToken(t, api, "dora", "password-123")
	for _, active := range []string{"false", "true"} {
		if resp, body := do(t, "PUT", api+"/users/2", admin, `{"role":"user","active":`+active+`,"user_email":"dora@example.com"}`); resp.StatusCode != 200 {
			t.Fatalf("update: %d %s", resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, "GET", api+"/pr/scan/1", old, ""); resp.StatusCode != 401 {
		t.Errorf("a token from before the deactivation: %d; want 401", resp.StatusCode)
	}
	fresh := loginToken(t, api, "dora", "password-123")
	if resp, _ := do(t, "GET", api+"/pr/scan/1", fresh, ""); resp.StatusCode != 200 {
		t.Errorf("a token from after the reactivation: %d; want 200", resp.StatusCode)
	}
}
