package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/scangate"
)

// TestPasswordLoginOff: with password login switched off
// (PASSWORD_LOGIN=false), POST /auth/token refuses the right password
// 403 with a problem that names single sign-on, and reads, counts and
// writes nothing (no token, no failure counted, no audit entry).
func TestPasswordLoginOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	login := api.Login(h.env.Store, password.Argon2id{}, time.Hour, true, time.Now, h.log).Handle
	h.fns["login-off"] = login
	before := h.auditCount(t)
	b, _ := json.Marshal(map[string]string{"username": "admin", "password": adminPassword})
	var status int
	var body string
	trips := h.env.CountTrips(func() {
		resp := h.call("login-off", jsonReq(nil, string(b)))
		status, body = resp.StatusCode, resp.Body
	})
	if status != http.StatusForbidden || !strings.Contains(body, "single sign-on") || !strings.Contains(body, `"status":403`) {
		t.Errorf("password login switched off: %d %s, want 403 naming single sign-on", status, body)
	}
	if trips != 0 {
		t.Errorf("a refused login made %d round trips, want none", trips)
	}
	if after := h.auditCount(t); after != before {
		t.Errorf("audit entries %d -> %d", before, after)
	}
	// On (the default), the same login passes.
	if resp := h.login("admin", adminPassword); resp.StatusCode != http.StatusOK {
		t.Errorf("password login on: %d %s", resp.StatusCode, resp.Body)
	}
}

// auditCount is how many audit entries the table holds (changes and
// logins).
func (h *harness) auditCount(t *testing.T) int {
	t.Helper()
	page, err := h.env.Store.AuditPage(t.Context(), scangate.AuditFilter{}, 500, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

// TestOIDCSessionBadInput: POST /auth/oidc/session with a body that is not
// a code, a PKCE verifier (RFC 7636), a redirect URI and a nonce answers
// 422 naming the member, before anything is read; without single sign-on
// configured a good body answers 404, with no round trip either.
func TestOIDCSessionBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good := map[string]any{"code": "abc", "code_verifier": strings.Repeat("v", 43), "redirect_uri": "https://dash.example.com/",
		"nonce": strings.Repeat("n", 22)}
	cases := map[string]struct {
		key     string
		value   any
		pointer string
	}{
		"no code":             {"code", nil, "/code"},
		"code with a space":   {"code", "a b", "/code"},
		"short verifier":      {"code_verifier", strings.Repeat("v", 42), "/code_verifier"},
		"verifier characters": {"code_verifier", strings.Repeat("v", 42) + "/", "/code_verifier"},
		"long verifier":       {"code_verifier", strings.Repeat("v", 129), "/code_verifier"},
		"short nonce":         {"nonce", "n", "/nonce"},
		"relative redirect":   {"redirect_uri", "/callback", "/redirect_uri"},
		"javascript redirect": {"redirect_uri", "javascript:alert(1)", "/redirect_uri"},
		"number code":         {"code", 7, "/code"},
		"unknown member":      {"state", "s", "/state"},
	}
	for name, c := range cases {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		if c.value == nil {
			delete(m, c.key)
		} else {
			m[c.key] = c.value
		}
		b, _ := json.Marshal(m)
		var status int
		var body string
		trips := h.env.CountTrips(func() {
			resp := h.call("create-oidc-session", jsonReq(nil, string(b)))
			status, body = resp.StatusCode, resp.Body
		})
		if status != http.StatusUnprocessableEntity || !strings.Contains(body, `"pointer":"`+c.pointer+`"`) {
			t.Errorf("%s: %d %s, want 422 at %s", name, status, body, c.pointer)
		}
		if trips != 0 {
			t.Errorf("%s: %d round trips", name, trips)
		}
	}
	b, _ := json.Marshal(good)
	trips := h.env.CountTrips(func() {
		if resp := h.call("create-oidc-session", jsonReq(nil, string(b))); resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Body, "not configured") {
			t.Errorf("single sign-on not configured: %d %s, want 404", resp.StatusCode, resp.Body)
		}
	})
	if trips != 0 {
		t.Errorf("not configured: %d round trips", trips)
	}
}
