package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// hostileText is what a recorder (or a server that is not scangate) can put
// in any string the CLI prints: colours, a carriage return that overwrites
// the line, a new line that starts a forged workflow command, a C1 control
// (CSI), DEL and a bidirectional override.
const hostileText = "src/\x1b[31mred\x1b[0m\rover\n::add-mask::sgt\n::error::forged\u009b2J\x7f\u202egnp.exe"

// hostileJSON is hostileText as a JSON string's contents.
var hostileJSON = func() string {
	b, _ := json.Marshal(hostileText)
	return strings.Trim(string(b), `"`)
}()

// raw reports what of s a terminal or a CI log would not show as text: a
// control character (C0 other than the new line, DEL, C1), a bidirectional
// control, or a line that begins a workflow command ("::").
func raw(s string) string {
	for _, r := range s {
		if (unicode.IsControl(r) && r != '\n') || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return fmt.Sprintf("%U", r)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "::") {
			return "a line starting with ::: " + line
		}
	}
	return ""
}

// recorder is a server that notes each request's Authorization header.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path+" Authorization="+req.Header.Get("Authorization"))
		r.mu.Unlock()
		// Were it trusted, this answer would let the pull request pass.
		fmt.Fprint(w, openGate)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// The CLI against a hostile stand-in: a redirect to another port of the
// same host and to another host is an error that names where it pointed,
// and neither the token nor any request goes there; the answer there is
// never trusted (exit 2, not 0).
func TestHostileRedirects(t *testing.T) {
	other := newRecorder(t)
	u, _ := url.Parse(other.srv.URL)
	for _, c := range []struct{ name, location string }{
		{"same host, other port", other.srv.URL + "/api/pr/7/gate"},
		{"other host", "http://localhost:" + u.Port() + "/api/pr/7/gate"},
		{"same origin", "/api/pr/8/gate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/pr/8/gate" {
					fmt.Fprint(w, openGate)
					return
				}
				http.Redirect(w, r, c.location, http.StatusTemporaryRedirect)
			}))
			defer srv.Close()
			cl := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
			code, out, errOut := cl.run(t, "gate", "--pr-id", "7")
			if code != exitError || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			if !strings.Contains(errOut, "307") || !strings.Contains(errOut, c.location) {
				t.Errorf("the error does not name the redirect and its location %s: %q", c.location, errOut)
			}
		})
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the redirects' target received %v", got)
	}
}

// A 401 whose detail echoes the Authorization header, a problem whose
// title, detail and pointers carry control characters: the CLI prints
// them escaped, and never its token.
func TestHostileProblem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		if r.URL.Path == "/api/pr/7/gate" {
			w.WriteHeader(401)
			detail, _ := json.Marshal("bad header " + r.Header.Get("Authorization"))
			fmt.Fprintf(w, `{"title":"Unauthorized","status":401,"detail":%s}`, detail)
			return
		}
		w.WriteHeader(422)
		fmt.Fprintf(w, `{"title":"%s","status":422,"detail":"%s","errors":[{"pointer":"/%s","detail":"%s"},{"parameter":"%s","detail":"x"}]}`,
			hostileJSON, hostileJSON, hostileJSON, hostileJSON, hostileJSON)
	}))
	defer srv.Close()
	cl := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
	code, _, errOut := cl.run(t, "gate", "--pr-id", "7") // cli.run fails the test if the token shows
	if code != exitError || !strings.Contains(errOut, "401 Unauthorized: bad header") {
		t.Errorf("401: exit %d %q", code, errOut)
	}
	code, _, errOut = cl.run(t, "allowlist", "create", "--type", "SECRET", "--name", "x")
	if code != exitError || !strings.Contains(errOut, "422") {
		t.Errorf("422: exit %d %q", code, errOut)
	}
	if r := raw(errOut); r != "" {
		t.Errorf("the problem details reach the terminal raw (%s):\n%s", r, errOut)
	}
	if !strings.Contains(errOut, `src/\x1b[31mred`) {
		t.Errorf("the escaped text is not shown as such:\n%s", errOut)
	}
}

// Fields of the service's answers (a finding's path and rule, a gate's
// category, an allowlist's name) with control characters: the tables, the
// messages and --json print them escaped, so that a recorded ESC, CR or
// ::add-mask:: line cannot reach a CI log raw.
func TestHostileFields(t *testing.T) {
	h := hostileJSON
	gate := `{"pr_id":7,"blocked":true,"head_sha":"` + h + `","reasons":[{"kind":"findings","scan_type":"SECRET","category":"` + h + `","scan_id":21,"count":1},` +
		`{"kind":"` + h + `","scan_type":"` + h + `","category":"` + h + `","scan_id":null,"count":0}],` +
		`"categories":[{"scan_type":"` + h + `","category":"` + h + `","scan_id":21,"status":"` + h + `","block_status":true,"secret_count":1,"vulnerability_count":0}],` +
		`"evaluated_at":"` + h + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /api/pr/7/gate":
			fmt.Fprint(w, gate)
		case "GET /api/pr/7/scans":
			fmt.Fprint(w, `{"items":[{"id":21,"pr_id":7,"scan_type":"SECRET","status":"`+h+`","other_details":{"category":"`+h+`"}}],"next_cursor":null}`)
		case "GET /api/pr/scan/21/findings":
			fmt.Fprint(w, `{"items":[{"id":1,"name":"`+h+`","aliases":[],"rule":"`+h+`","path":"`+h+`","line":4,"severity":"`+h+`","suppressed":false,"suppressed_by":[]}],"next_cursor":null}`)
		case "GET /api/whitelist":
			fmt.Fprint(w, `{"items":[{"id":3,"type":"`+h+`","name":"`+h+`","active":true,"global_":false,"repos":[],"vcs":[],"paths":["`+h+`"],"reason":"`+h+`","expires_at":"`+h+`"}],"next_cursor":"`+h+`"}`)
		case "POST /api/whitelist":
			w.WriteHeader(201)
			fmt.Fprint(w, `{"id":3,"type":"`+h+`","name":"`+h+`","secrets_updated":1,"vulnerabilities_updated":0}`)
		case "POST /api/auth/tokens":
			w.WriteHeader(201)
			fmt.Fprint(w, `{"id":4,"name":"`+h+`","scope":"`+h+`","expires_at":"`+h+`","access_token":"sgt_4_new"}`)
		default:
			problem(w, 404, "no such route")
		}
	}))
	defer srv.Close()
	cl := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
	for _, args := range [][]string{
		{"gate", "--pr-id", "7"},
		{"gate", "--pr-id", "7", "--json"},
		{"findings", "--pr-id", "7", "--all"},
		{"findings", "--pr-id", "7", "--json"},
		{"allowlist", "list"},
		{"allowlist", "create", "--type", "SECRET", "--name", "x"},
		{"token", "create", "--name", "ci"},
	} {
		code, out, errOut := cl.run(t, args...)
		if code == exitError {
			t.Errorf("%v: exit 2: %s", args, errOut)
		}
		if r := raw(out + errOut); r != "" {
			t.Errorf("%v prints the service's text raw (%s):\n%s%s", args, r, out, errOut)
		}
	}
}

// The upload's line accounts for every result of the log (recorded, merged
// duplicates, skipped; suppressed in source among the recorded), and
// counts carry their nouns in the singular and the plural.
func TestUploadLineAddsUp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "POST /api/pr/scan/sarif":
			w.WriteHeader(201)
			fmt.Fprint(w, `{"scans":[{"id":18,"pr_id":7,"scan_type":"SECRET","status":"completed","block_status":true,"other_details":{"category":"gitleaks"},"secret_count":1,"vulnerability_count":0}],`+
				`"results":34,"recorded":30,"suppressed_in_source":2,"skipped":3}`)
		case "GET /api/pr/7/scans":
			fmt.Fprint(w, `{"items":[{"id":18,"pr_id":7,"scan_type":"SECRET","other_details":{"category":"gitleaks"}}],"next_cursor":null}`)
		case "GET /api/pr/scan/18/findings":
			fmt.Fprint(w, `{"items":[{"id":1,"name":"sha256:ab","aliases":[],"rule":"r","path":"a.env","line":1,"suppressed":false,"suppressed_by":[]}],"next_cursor":null}`)
		default:
			problem(w, 404, "no such route")
		}
	}))
	defer srv.Close()
	c := github(t, srv.URL+"/api")
	code, out, errOut := c.run(t, "upload", "--no-gate", gzipSized(t, 100))
	if code != exitOK || !strings.Contains(out, ": 34 results: 30 recorded (2 of them suppressed in source), 1 duplicate merged, 3 skipped\n") ||
		!strings.Contains(out, "  scan 18 SECRET gitleaks: completed, 1 secret, 0 vulnerabilities, blocks: yes\n") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = c.run(t, "findings", "--pr-id", "7")
	if code != exitOK || !strings.HasSuffix(out, "\n1 finding in 1 scan\n") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}

// A URL without /api answers 404 for every route: the error says what to
// change.
func TestHintWithoutAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { problem(w, 404, "no such route") }))
	defer srv.Close()
	code, _, errOut := cli{env: map[string]string{"SCANGATE_URL": srv.URL, "SCANGATE_TOKEN": testToken}}.run(t, "gate", "--pr-id", "7")
	if code != exitError || !strings.Contains(errOut, "404 Not Found: no such route\nhint: the API's URL "+srv.URL+" does not end in /api") ||
		!strings.Contains(errOut, "e.g. "+srv.URL+"/api") {
		t.Errorf("exit %d %q", code, errOut)
	}
	code, _, errOut = cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}.run(t, "gate", "--pr-id", "7")
	if code != exitError || strings.Contains(errOut, "hint") {
		t.Errorf("with /api: exit %d %q", code, errOut)
	}
}
