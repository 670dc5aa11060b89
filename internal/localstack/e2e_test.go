package localstack_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/logcheck"
	"github.com/scangate/scangate/internal/scangate"
)

// startStack runs the whole local service as make run does, on a fresh
// table, behind a real HTTP server.
func startStack(t *testing.T, authorizerTTL time.Duration) (*localstack.Stack, string, string) {
	stack, api, dir, _ := startCounted(t, authorizerTTL)
	return stack, api, dir
}

// startCounted is startStack with the DynamoDB client whose round trips
// the returned env counts.
func startCounted(t *testing.T, authorizerTTL time.Duration) (*localstack.Stack, string, string, *ddbtest.Env) {
	t.Helper()
	stack, api, dir, env, _ := startLogged(t, authorizerTTL)
	return stack, api, dir, env
}

// startLogged is startCounted with the stack's log: every line is kept
// and, when the test ends, checked for the secrets the test's requests
// and answers carried and for metric lines the format refuses
// (logcheck).
func startLogged(t *testing.T, authorizerTTL time.Duration) (*localstack.Stack, string, string, *ddbtest.Env, *logcheck.Sink) {
	t.Helper()
	logs := logcheck.New(t)
	env := ddbtest.New(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, ".build", "admin-password")
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template:      "../../template.yaml",
		Table:         env.Table,
		Client:        env.DB,
		AdminUsername: "admin",
		PasswordFile:  pwFile,
		AuthorizerTTL: authorizerTTL,
		TokenTTL:      time.Hour,
		Seed:          true,
		Log:           logs.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := os.ReadFile(pwFile); err == nil {
		logs.Secret(strings.TrimSpace(string(pw)))
	}
	srv := httptest.NewServer(logs.Handler(stack.Handler))
	t.Cleanup(srv.Close)
	return stack, srv.URL + "/api", dir, env, logs
}

// runReadmeBlock runs the README's shell block between <!-- name --> and
// <!-- /name -->, as written, against a local server of its own, and
// returns what it printed. It skips the test when a tool it needs is
// missing.
func runReadmeBlock(t *testing.T, name string, tools ...string) string {
	t.Helper()
	return runDocBlock(t, "../../README.md", name, nil, tools...)
}

// docBlock is the fenced block of a document between <!-- name --> and
// <!-- /name -->.
func docBlock(t *testing.T, path, name string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + name + " -->\n```[a-z]*\n(.*?)```\n<!-- /" + name + " -->").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("%s has no %s block", path, name)
	}
	return string(m[1])
}

// runDocBlock runs a document's shell block, as written, with env added to
// the environment, against a local server of its own (API), in a
// directory of its own, and returns what it printed.
func runDocBlock(t *testing.T, path, name string, env []string, tools ...string) string {
	t.Helper()
	for _, tool := range append([]string{"curl"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	block := docBlock(t, path, name)
	_, api, dir := startStack(t, -1)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "API="+api), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the %s block of %s failed: %v\n%s", name, path, err, out)
	}
	return string(out)
}

// TestReadmeCurlFlow runs the README's curl examples, as written, against
// the local server.
func TestReadmeCurlFlow(t *testing.T) {
	t.Parallel()
	got := runReadmeBlock(t, "curl-flow")
	for _, want := range []string{
		"HTTP/1.1 401",
		`Www-Authenticate: Bearer realm="scangate", error="invalid_token"`,
		`"status":401`,
		`"title":"Forbidden","status":403`,
		`{"id":2,"pr_id":1,"vc_id":1,"webhook_id":1001,"repo_id":101,"vc_type":"github","scan_type":"VULNERABILITY"`,
		`{"id":13,"pr_id":1,`,
		`"pr":{"id":1,"pr_id":10,"pr_name":"Rotate keys"`,
		`{"id":1,"pr_id":1,"vc_id":1,`,
		`{"id":1,"created_by":1,"updated_by":1,`,
		`"comments":[1,2],"type":"SECRET"}`,
		// The read side.
		`{"items":[{"id":1,"name":"sha256:5f2b9c0e8d1a","aliases":[],"rule":"aws-access-key","path":"config/prod.env","line":3,"severity":"high","suppressed":true,"suppressed_by":[1],` +
			`"fingerprint":"` + scangate.DerivedFingerprint("aws-access-key", "config/prod.env", "sha256:5f2b9c0e8d1a", nil) + `:1","fingerprint_source":"derived",` +
			`"baseline_state":"new"}],"next_cursor":null}`,
		"\n" + `{"id":1,"pr_id":10,"pr_name":"Rotate keys","pr_link":"https://git.example.com/acme/payments/pull/10","repo_id":101,`,
		"Link: </api/pr/1/scans?cursor=",
		`&limit=1&scan_type=SECRET>; rel="next"`,
		`{"items":[{"id":13,"pr_id":1,`,
		`{"items":[{"id":5,"pr_id":30,`,
		`{"items":[{"id":1,"pr_id":10,"pr_name":"Rotate keys"`,
		`"paths":[],"fingerprints":[],"reason":"used_in_tests","expires_at":null,"expired":false,"comments":[{"id":1,"comment":"test fixture, not a live key","created_by":1,`,
		`"expired":false,"comments":[1,2],"created_by":1,`,
		`"secrets_updated":3,"vulnerabilities_updated":0,"comments":[1],`,
		`"secrets_updated":1,"vulnerabilities_updated":0,"comments":[1,2],`,
		`{"items":[{"id":2,"username":"reader-`,
		`"errors":[{"parameter":"cursor","detail":"was not issued by this listing"}]`,
		`"detail":"only admins may read other users"`,
		// Tokens, the lifecycle and the audit log.
		`"detail":"a read token may not call CreateAllowlist"`,
		`"kind":"personal","name":"dashboard-`,
		"204\n",
		`"action":"allowlist.create","actor":{"user_id":1,"username":"admin"`,
		// The gate and its policy.
		`{"pr_id":1,"blocked":true,"head_sha":null,"base_ref":null,"reasons":[{"kind":"findings","scan_type":"VULNERABILITY","category":"default","scan_id":2,"count":1,"new_count":1}],`,
		`"rejudge":{"id":4,"status":"complete","prs":6}}`, // works 1 to 3: the allowlists' re-evaluations
		`{"scan_type":"VULNERABILITY","category":"semgrep","scan_id":14,"status":"completed","block_status":false,"secret_count":0,"vulnerability_count":1,`,
		`"head_sha":"9fceb02d0ae598e95dc970b74767f19372d61af8"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the curl flow's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "password") {
		t.Errorf("a response shows a password:\n%s", got)
	}
	// The user the block made, named for its run, and changed.
	for _, re := range []string{`"username":"reader-(\d+)","role":"readonly","user_email":"reader-(\d+)@example.com"`, `"user_email":"Reader-\d+@Example.com"`} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("the curl flow's output lacks %s:\n%s", re, got)
		}
	}
	// PR #10 found by its number: a page of that one PR, scangate's id 1.
	if !regexp.MustCompile(`\{"items":\[\{"id":1,"pr_id":10,[^\]]*\}\],"next_cursor":null\}`).MatchString(got) {
		t.Errorf("the curl flow's output lacks PR #10 alone on a page:\n%s", got)
	}
}

func do(t testing.TB, method, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func loginToken(t *testing.T, api, username, password string) string {
	t.Helper()
	resp, body := do(t, "POST", api+"/auth/token", "", `{"username":"`+username+`","password":"`+password+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("login %s: %d %s", username, resp.StatusCode, body)
	}
	return regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(body)[1]
}

func adminPassword(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".build", "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGatewayBehaviour(t *testing.T) {
	t.Parallel()
	_, api, dir := startStack(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))

	// Unknown routes and methods: 404 problem details, authorizer or not.
	for _, r := range [][2]string{{"GET", "/nothing"}, {"GET", "/auth/token"}, {"DELETE", "/users/1"}, {"PUT", "/users/me"}, {"GET", "/pr/scan"}, {"POST", "/auth/token/x"}, {"PUT", "/users/1/"}} {
		resp, body := do(t, r[0], api+r[1], admin, "")
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":404`) {
			t.Errorf("%s %s: %d %s", r[0], r[1], resp.StatusCode, body)
		}
	}
	// The collection path with and without its trailing slash.
	for i, p := range []string{"/users", "/users/"} {
		name := []string{"tina", "uma"}[i]
		resp, body := do(t, "POST", api+p, admin, `{"username":"`+name+`","user_email":"`+name+`@example.com","password":"password-123","role":"user"}`)
		if resp.StatusCode != 201 {
			t.Errorf("POST %s: %d %s", p, resp.StatusCode, body)
		}
	}
	// 401 from the gateway for a missing, malformed or unknown token, in the
	// problem+json shape of the template's GatewayResponses.
	for _, tok := range []string{"", "not-a-token", "sgt_1_" + strings.Repeat("0", 72)} {
		resp, body := do(t, "PUT", api+"/users/2", tok, `{"role":"user","active":true,"user_email":"tina@example.com"}`)
		if resp.StatusCode != 401 || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(body, `"status":401`) {
			t.Errorf("token %q: %d %v %s", tok, resp.StatusCode, resp.Header, body)
		}
	}
	// A 401 from the gateway changes nothing.
	resp, body := do(t, "PUT", api+"/users/2", admin, `{"role":"user","active":true,"user_email":"tina@example.com"}`)
	if resp.StatusCode != 200 || !strings.Contains(body, `"user_email":"tina@example.com"`) {
		t.Errorf("update: %d %s", resp.StatusCode, body)
	}
	// A deactivated user's token stops at once when the cache is off.
	tina := loginToken(t, api, "tina", "password-123")
	if resp, body := do(t, "PUT", api+"/users/3", tina, `{}`); resp.StatusCode != 403 {
		t.Errorf("user role on update user: %d %s", resp.StatusCode, body)
	}
	do(t, "PUT", api+"/users/2", admin, `{"role":"user","active":false,"user_email":"tina@example.com"}`)
	if resp, _ := do(t, "PUT", api+"/users/3", tina, `{}`); resp.StatusCode != 401 {
		t.Errorf("a deactivated user's token: %d; want 401", resp.StatusCode)
	}
}

func TestAuthorizerCache(t *testing.T) {
	t.Parallel()
	stack, api, dir, env := startCounted(t, time.Hour)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	// The first request runs the authorizer (1 round trip, and the record of
	// the token's first use) and the function (2); the next ones find the
	// answer in the cache. The stack settles first: the demo data's events
	// are dispatched beside the requests, through the same table.
	for i, want := range []int64{4, 2, 2} {
		settle(t, stack)
		trips := env.CountTrips(func() {
			if resp, body := do(t, "GET", api+"/pr/scan/1", admin, ""); resp.StatusCode != 200 {
				t.Fatalf("get scan: %d %s", resp.StatusCode, body)
			}
		})
		if trips != want {
			t.Errorf("request %d: %d round trips; want %d", i+1, trips, want)
		}
	}
	do(t, "POST", api+"/users", admin, `{"username":"vera","user_email":"vera@example.com","password":"password-123","role":"readonly"}`)
	vera := loginToken(t, api, "vera", "password-123")
	if resp, _ := do(t, "PUT", api+"/users/2", vera, `{}`); resp.StatusCode != 403 {
		t.Fatalf("readonly: %d", resp.StatusCode)
	}
	do(t, "PUT", api+"/users/2", admin, `{"role":"readonly","active":false,"user_email":"vera@example.com"}`)
	// Within the TTL the cached Allow still answers, as on API Gateway; the
	// function reads the user as it is, and answers in the contract's
	// order: 401 (deactivated) before 403 (an admin-only route).
	if resp, _ := do(t, "PUT", api+"/users/2", vera, `{}`); resp.StatusCode != 401 {
		t.Fatalf("cached readonly, deactivated since: %d; want 401 from the function", resp.StatusCode)
	}
}
