package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/scangate"
)

// Tests of the hardening of issue 11: what an adversarial client can send.

// send runs handler fn on a whole event, as the given caller.
func (h *harness) send(fn string, c *scangate.Caller, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	h.t.Helper()
	h.present(&ev, c)
	resp, err := h.fn(fn)(context.Background(), ev)
	if err != nil {
		h.t.Fatalf("%s returned an error to Lambda: %v", fn, err)
	}
	return resp
}

const scanBody = `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"gh","repo_id":1,"repo_name":"o/r","webhook_id":1,` +
	`"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"},"status":"completed","findings":[{"name":%s}]}`

func loginBody(username, password string) string {
	b, _ := json.Marshal(map[string]string{"username": username, "password": password})
	return string(b)
}

// TestLoginWithImpossibleUsernameIsUnread (issue 11, items 4 and 7): a login
// whose username no user can have, such as 2,100 characters, a Kelvin sign
// for a K or a zero-width space, is a 401 decided without any DynamoDB
// round trip, so it never reaches a key.
func TestLoginWithImpossibleUsernameIsUnread(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.call("create-user", jsonReq(&h.admin, `{"username":"kevin","user_email":"kevin@example.com","password":"kevin password 1","role":"user"}`)))
	for _, name := range []string{strings.Repeat("k", 2100), strings.Repeat("k", 65), "ke", "\u212Aevin", "ｋｅｖｉｎ", "kevin\u200b", "\u202ekevin", "kev\x00in"} {
		var resp events.APIGatewayProxyResponse
		n := h.env.CountTrips(func() { resp = h.login(name, "kevin password 1") })
		expectProblem(t, resp, http.StatusUnauthorized)
		if resp.Headers["WWW-Authenticate"] == "" {
			t.Errorf("login as %.24q: 401 without WWW-Authenticate", name)
		}
		if n != 0 {
			t.Errorf("login as %.24q (%d bytes) made %d DynamoDB round trips; want 0", name, len(name), n)
		}
	}
	if resp := h.login("kevin", "kevin password 1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("kevin's own login: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestTokenResponseIsNotStored (issue 11, item 6): the token of a login is
// sent with Cache-Control: no-store (RFC 6749 section 5.1).
func TestTokenResponseIsNotStored(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.login("admin", adminPassword)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, resp.Body)
	}
	if cc, pragma := resp.Headers["Cache-Control"], resp.Headers["Pragma"]; cc != "no-store" || pragma != "no-cache" {
		t.Fatalf("token response has Cache-Control %q, Pragma %q; want no-store, no-cache", cc, pragma)
	}
}

// TestSecretRepliesAreNotStored: any reply that says it carries a secret
// (a token: personal tokens come later) gets the same headers; others don't.
func TestSecretRepliesAreNotStored(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, secret := range []bool{true, false} {
		e := api.Endpoint{Name: "Issue", Log: log, Run: func(context.Context, scangate.Caller, events.APIGatewayProxyRequest) (api.Reply, error) {
			return api.Reply{Status: http.StatusCreated, Body: map[string]string{"token": "x"}, Secret: secret}, nil
		}}
		resp, err := e.Handle(context.Background(), events.APIGatewayProxyRequest{})
		if err != nil {
			t.Fatal(err)
		}
		_, hasCC := resp.Headers["Cache-Control"]
		switch {
		case secret && (resp.Headers["Cache-Control"] != "no-store" || resp.Headers["Pragma"] != "no-cache"):
			t.Errorf("secret reply headers %v; want Cache-Control: no-store and Pragma: no-cache", resp.Headers)
		case !secret && hasCC:
			t.Errorf("plain reply headers %v; want no Cache-Control", resp.Headers)
		}
	}
}

// TestEmailUniquenessFoldsUnicode (issue 11, item 7): e-mail addresses are
// unique after NFKC normalisation and full case folding.
func TestEmailUniquenessFoldsUnicode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	create := func(username, email string) events.APIGatewayProxyResponse {
		b, _ := json.Marshal(map[string]string{"username": username, "user_email": email, "password": "a long password", "role": "user"})
		return h.call("create-user", jsonReq(&h.admin, string(b)))
	}
	sigma := mustOK(t, create("sigma", "σ@example.com"))
	mustOK(t, create("kevin", "kevin@example.com"))
	other := mustOK(t, create("other", "other@example.com"))
	for i, email := range []string{"ς@example.com", "Σ@EXAMPLE.COM", "\u212Aevin@example.com", "ｋｅｖｉｎ@example.com", "KEVIN@ｅｘａｍｐｌｅ.ｃｏｍ"} {
		expectProblem(t, create(fmt.Sprintf("dup%d", i), email), http.StatusConflict)
	}
	if n := h.countUsers(); n != 4 {
		t.Fatalf("%d users stored; want 4 (the admin, sigma, kevin, other)", n)
	}
	update := func(id any, email string) events.APIGatewayProxyResponse {
		r := jsonReq(&h.admin, fmt.Sprintf(`{"role":"user","active":true,"user_email":%q}`, email))
		r.params = map[string]string{"user_id": fmt.Sprint(id)}
		return h.call("update-user", r)
	}
	expectProblem(t, update(other["id"], "ς@example.com"), http.StatusConflict)
	if u := mustOK(t, update(sigma["id"], "Σ@Example.com")); u["user_email"] != "Σ@Example.com" {
		t.Fatalf("sigma keeping its own address in another case: %v", u)
	}
}

// TestIdentifiersRefuseHiddenCharacters (issue 11, item 7): control and
// format characters in an e-mail address, a username, an allowlist name or
// a finding name are a 422 naming the member, and nothing is stored.
func TestIdentifiersRefuseHiddenCharacters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	for _, hide := range []string{`\u0000`, `\u200b`, `\u202e`, `\u2066`, `\ufeff`, `\u00ad`, `\u001b`} {
		for _, c := range []struct {
			fn, body, pointer string
			params            map[string]string
		}{
			{"create-user", `{"username":"alice","user_email":"ali` + hide + `ce@example.com","password":"a long password","role":"user"}`, "/user_email", nil},
			{"create-user", `{"username":"ali` + hide + `ce","user_email":"alice@example.com","password":"a long password","role":"user"}`, "/username", nil},
			{"update-user", `{"role":"admin","active":true,"user_email":"admin@exa` + hide + `mple.com"}`, "/user_email", map[string]string{"user_id": "1"}},
			{"create-allowlist", `{"type":"SECRET","reason":"revoked","name":"sha256:` + hide + `aa"}`, "/name", nil},
			{"create-allowlist", `{"type":"VULNERABILITY","reason":"revoked","name":"CVE-2021-44228` + hide + `"}`, "/name", nil},
			{"update-allowlist", `{"name":"` + hide + `CVE-2021-44228"}`, "/name", map[string]string{"whitelist_id": "1"}},
			{"record-scan", fmt.Sprintf(scanBody, `"sha256:`+hide+`bb"`), "/findings/0/name", nil},
		} {
			r := jsonReq(&h.admin, c.body)
			r.params = c.params
			ptrs := expectProblem(t, h.call(c.fn, r), http.StatusUnprocessableEntity)
			if len(ptrs) != 1 || ptrs[0] != c.pointer {
				t.Errorf("%s %s: pointers %v; want [%s]", c.fn, c.body, ptrs, c.pointer)
			}
		}
	}
	if after := len(h.items()); after != before {
		t.Fatalf("the table went from %d to %d items", before, after)
	}
}

// TestLoneSurrogateEscapesAre400 (issue 11, item 8): a \u escape that is a
// lone surrogate is not I-JSON (RFC 7493): 400, never U+FFFD, so two
// different names never become one. Valid pairs still work.
func TestLoneSurrogateEscapesAre400(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	for _, s := range []string{`\ud800`, `\udc00x`, `\uDBFF`, `a\ud800b`, `\ud800\u0041`, `\ud800\ud800`, `\udbff\udbff\udc00`, `\ud83d\\ude00`, `\ud83d\n`, `x\udfff`} {
		for _, c := range []struct{ fn, body string }{
			{"create-allowlist", `{"type":"SECRET","reason":"revoked","name":"sha256:` + s + `"}`},
			{"create-allowlist", `{"type":"SECRET","reason":"revoked","name":"sha256:aa","comment":"` + s + `"}`},
			{"create-allowlist", `{"type":"SECRET","reason":"revoked","name":"sha256:aa","` + s + `":1}`},
			{"record-scan", fmt.Sprintf(scanBody, `"sha256:`+s+`"`)},
			{"create-user", `{"username":"` + s + `alice","user_email":"alice@example.com","password":"a long password","role":"user"}`},
			{"login", `{"username":"admin` + s + `","password":"` + adminPassword + `"}`},
		} {
			var caller *scangate.Caller
			if c.fn != "login" {
				caller = &h.admin
			}
			resp := h.call(c.fn, jsonReq(caller, c.body))
			expectProblem(t, resp, http.StatusBadRequest)
			if !strings.Contains(resp.Body, "surrogate") {
				t.Errorf("%s %s: the problem %s does not say what is wrong", c.fn, c.body, resp.Body)
			}
		}
	}
	if after := len(h.items()); after != before {
		t.Fatalf("the table went from %d to %d items", before, after)
	}
	// A valid pair is one character; an escaped backslash before "ud800" is text.
	for body, want := range map[string]string{
		`{"type":"SECRET","name":"sha256:\ud83d\ude00"}`:    "sha256:😀",
		`{"type":"SECRET","name":"sha256:\uD83D\uDE00x"}`:   "sha256:😀x",
		`{"type":"SECRET","name":"sha256:\\ud800"}`:         `sha256:\ud800`,
		`{"type":"SECRET","name":"sha256:\\\ud83d\ude00"}`:  `sha256:\😀`,
		`{"type":"SECRET","name":"sha256:\"\ud83d\udc00"}`:  `sha256:"🐀`,
		`{"type":"SECRET","name":"sha256:\\\\ud800\u00e9"}`: `sha256:\\ud800é`,
	} {
		if got := mustOK(t, h.allow(body))["name"]; got != want {
			t.Errorf("%s: name %q; want %q", body, got, want)
		}
	}
}

func gzipped(t *testing.T, s string) string {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestContentEncodingAndCharsetAre415 (issue 11, item 9): a body sent with
// any Content-Encoding, or in a charset other than UTF-8, is 415, in the
// order of the contract (413 before 415 before 400).
func TestContentEncodingAndCharsetAre415(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	login := loginBody("admin", adminPassword)
	ev := func(body string, b64 bool, headers ...string) events.APIGatewayProxyRequest {
		e := events.APIGatewayProxyRequest{Body: body, IsBase64Encoded: b64, Headers: map[string]string{}}
		for i := 0; i < len(headers); i += 2 {
			e.Headers[headers[i]] = headers[i+1]
		}
		return e
	}
	for _, c := range []struct {
		name string
		ev   events.APIGatewayProxyRequest
		want int
	}{
		{"gzip body", ev(gzipped(t, login), true, "Content-Type", "application/json", "Content-Encoding", "gzip"), 415},
		{"gzip header on plain JSON", ev(login, false, "content-type", "application/json", "content-encoding", "gzip"), 415},
		{"deflate", ev(login, false, "Content-Type", "application/json", "Content-Encoding", "deflate"), 415},
		{"identity", ev(login, false, "Content-Type", "application/json", "Content-Encoding", "identity"), 415},
		{"latin1", ev(login, false, "Content-Type", "application/json; charset=latin1"), 415},
		{"ISO-8859-1", ev(login, false, "Content-Type", "application/json;charset=ISO-8859-1"), 415},
		{"utf-16", ev(login, false, "Content-Type", "application/json; charset=utf-16"), 415},
		{"two charsets", ev(login, false, "Content-Type", "application/json; charset=utf-8; charset=latin1"), 415},
		{"gzip over 256 KiB", ev(`{"username":"`+strings.Repeat("a", api.MaxBody)+`"}`, false, "Content-Type", "application/json", "Content-Encoding", "gzip"), 413},
		{"gzip and not JSON", ev(`{"username":`, false, "Content-Type", "application/json", "Content-Encoding", "gzip"), 415},
		{"latin1 and not UTF-8", ev("{\"username\":\"\xe9\"}", false, "Content-Type", "application/json; charset=latin1"), 415},
		{"utf-8", ev(login, false, "Content-Type", "application/json; charset=utf-8"), 200},
		{"UTF-8", ev(login, false, "Content-Type", "application/json; charset=UTF-8"), 200},
		{"quoted", ev(login, false, "Content-Type", `Application/JSON; Charset="Utf-8"`), 200},
		{"no charset", ev(login, false, "Content-Type", "application/json"), 200},
		{"empty Content-Encoding", ev(login, false, "Content-Type", "application/json", "Content-Encoding", ""), 200},
	} {
		resp := h.send("login", nil, c.ev)
		if c.want == 200 {
			if resp.StatusCode != 200 {
				t.Errorf("%s: %d %s; want 200", c.name, resp.StatusCode, resp.Body)
			}
			continue
		}
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s; want %d", c.name, resp.StatusCode, resp.Body, c.want)
			continue
		}
		expectProblem(t, resp, c.want)
		if c.want == 415 && strings.Contains(c.name, "gzip") && resp.Headers["Accept-Encoding"] != "identity" {
			t.Errorf("%s: 415 with Accept-Encoding %q; want identity (RFC 9110 section 15.5.16)", c.name, resp.Headers["Accept-Encoding"])
		}
	}
	// A write answers the same way and stores nothing.
	before := h.countUsers()
	body := `{"username":"alice","user_email":"alice@example.com","password":"a long password","role":"user"}`
	expectProblem(t, h.send("create-user", &h.admin, ev(gzipped(t, body), true, "Content-Type", "application/json", "Content-Encoding", "gzip")), 415)
	expectProblem(t, h.send("create-user", &h.admin, ev(body, false, "Content-Type", "application/json; charset=windows-1252")), 415)
	if h.countUsers() != before {
		t.Fatal("a refused body created a user")
	}
}

// TestLocationFollowsRequestPath (issue 11, item 10): Location is built from
// the path the client called, so it stays right behind a stage
// (/prod/api/...) and behind a custom domain's base path.
func TestLocationFollowsRequestPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	n := 0
	bodies := map[string]func() string{
		"/users": func() string {
			n++
			return fmt.Sprintf(`{"username":"user%d","user_email":"user%d@example.com","password":"a long password","role":"user"}`, n, n)
		},
		"/pr/scan":   func() string { return fmt.Sprintf(scanBody, `"sha256:aa"`) },
		"/whitelist": func() string { return `{"type":"SECRET","name":"sha256:aa","reason":"revoked"}` },
	}
	fns := map[string]string{"/users": "create-user", "/pr/scan": "record-scan", "/whitelist": "create-allowlist"}
	for _, route := range []string{"/users", "/pr/scan", "/whitelist"} {
		for _, c := range []struct {
			name, path, contextPath, stage, want string
		}{
			{"stage", "/api" + route, "/prod/api" + route, "prod", "/prod/api" + route},
			{"stage and trailing slash", "/api" + route + "/", "/prod/api" + route + "/", "prod", "/prod/api" + route},
			{"custom domain base path", "/v1/api" + route, "/v1/api" + route, "prod", "/v1/api" + route},
			{"custom domain root", "/api" + route, "/api" + route, "prod", "/api" + route},
			{"no request context path", "/api" + route, "", "", "/api" + route},
		} {
			e := events.APIGatewayProxyRequest{Path: c.path, Resource: "/api" + route, HTTPMethod: http.MethodPost, Body: bodies[route](),
				Headers: map[string]string{"Content-Type": "application/json"}}
			e.RequestContext.Path, e.RequestContext.Stage, e.RequestContext.ResourcePath = c.contextPath, c.stage, "/api"+route
			resp := h.send(fns[route], &h.admin, e)
			created := mustOK(t, resp)
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("POST %s: %d", route, resp.StatusCode)
			}
			want := fmt.Sprintf("%s/%v", c.want, created["id"])
			if got := resp.Headers["Location"]; got != want {
				t.Errorf("POST %s, %s: Location %q; want %q", route, c.name, got, want)
			}
		}
	}
}

// TestContentTooLargeTitleMatchesGateway (issue 11, item 12): a function's
// 413 says what API Gateway's REQUEST_TOO_LARGE response in template.yaml
// says: the title of RFC 9110, "Content Too Large".
func TestContentTooLargeTitleMatchesGateway(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Properties struct {
				GatewayResponses map[string]struct {
					StatusCode         int `yaml:"StatusCode"`
					ResponseParameters struct {
						Headers map[string]yaml.Node `yaml:"Headers"` // values may be intrinsics (!If)
					} `yaml:"ResponseParameters"`
					ResponseTemplates map[string]string `yaml:"ResponseTemplates"`
				} `yaml:"GatewayResponses"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	var gw struct {
		Title  string
		Status int
	}
	var contentType string
	found := 0
	for _, r := range tpl.Resources {
		g, ok := r.Properties.GatewayResponses["REQUEST_TOO_LARGE"]
		if !ok {
			continue
		}
		found++
		if err := json.Unmarshal([]byte(g.ResponseTemplates["application/json"]), &gw); err != nil {
			t.Fatalf("REQUEST_TOO_LARGE template: %v", err)
		}
		ct := g.ResponseParameters.Headers["Content-Type"]
		contentType = strings.Trim(ct.Value, "'")
		if g.StatusCode != http.StatusRequestEntityTooLarge || gw.Status != g.StatusCode {
			t.Fatalf("REQUEST_TOO_LARGE answers %d with status %d in its body", g.StatusCode, gw.Status)
		}
	}
	if found != 1 || gw.Title == "" {
		t.Fatalf("template.yaml has %d REQUEST_TOO_LARGE gateway responses (title %q); want one", found, gw.Title)
	}

	h := newHarness(t)
	big := `{"type":"SECRET","name":"` + strings.Repeat("a", api.MaxBody) + `"}`
	for _, fn := range []string{"create-allowlist", "login"} {
		var caller *scangate.Caller
		if fn != "login" {
			caller = &h.admin
		}
		resp := h.call(fn, jsonReq(caller, big))
		expectProblem(t, resp, http.StatusRequestEntityTooLarge)
		var p struct {
			Title  string
			Status int
		}
		if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
			t.Fatal(err)
		}
		if p.Title != gw.Title || p.Title != "Content Too Large" || resp.Headers["Content-Type"] != contentType {
			t.Errorf("%s: 413 %q as %s; the gateway says %q as %s", fn, p.Title, resp.Headers["Content-Type"], gw.Title, contentType)
		}
	}
}
