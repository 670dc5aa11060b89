package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// recordingRoutes are the routes that record a scan's envelope, each with
// a body builder: the envelope's members as given, plus what the route
// needs (a finding, a SARIF log).
var recordingRoutes = []struct {
	fn   string
	body func(env map[string]any) string
}{
	{"record-scan", func(env map[string]any) string {
		env["scan_type"] = "SECRET"
		if _, ok := env["findings"]; !ok {
			env["findings"] = []any{map[string]any{"name": "sha256:aa", "rule": "aws-key", "path": "src/a.go"}}
		}
		return marshal(env)
	}},
	{"record-sarif", func(env map[string]any) string {
		env["sarif"] = map[string]any{"version": "2.1.0", "runs": []any{map[string]any{"tool": map[string]any{"driver": map[string]any{"name": "trivy"}}, "results": []any{}}}}
		return marshal(env)
	}},
	{"create-sarif-upload", func(env map[string]any) string { return marshal(env) }},
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// envelope is a valid envelope, with set applied to it.
func envelope(set func(env map[string]any)) map[string]any {
	env := map[string]any{"vc_type": "github", "vc_id": 1, "vc_name": "acme", "repo_id": 5, "repo_name": "acme/api", "webhook_id": 1,
		"pr":       map[string]any{"pr_id": 7, "pr_name": "Add login", "pr_link": "https://github.com/acme/api/pull/7"},
		"stat_url": "https://ci.example.com/1", "other_details": map[string]any{"runner": "linux"}}
	if set != nil {
		set(env)
	}
	return env
}

func (h *harness) recordAs(fn, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.send(fn, &h.admin, events.APIGatewayProxyRequest{Body: body, Headers: map[string]string{"Content-Type": "application/json"}})
}

// TestRecordingRefusesControlCharacters (issue 30, item 3): a control
// character (C0 such as ESC, CR, LF, BEL; DEL; C1) or a bidirectional
// control (embeddings, overrides, isolates, marks) in any string member of
// a recording's envelope, or of a finding of POST /pr/scan, is a 422 whose
// one pointer names the member, on every recording route, and nothing is
// stored.
func TestRecordingRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	bad := []string{"\x1b[31m", "\r", "\n", "\a", "\x00", "\x7f", "\u0085", "\u009b", "\u202a", "\u202e", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c"}
	fields := []struct {
		pointer string
		set     func(env map[string]any, s string)
	}{
		{"/vc_type", func(env map[string]any, s string) { env["vc_type"] = "git" + s + "hub" }},
		{"/vc_name", func(env map[string]any, s string) { env["vc_name"] = "ac" + s + "me" }},
		{"/repo_name", func(env map[string]any, s string) { env["repo_name"] = "acme/a" + s + "pi" }},
		{"/pr/pr_name", func(env map[string]any, s string) { env["pr"].(map[string]any)["pr_name"] = "Add " + s + "login" }},
		{"/pr/pr_link", func(env map[string]any, s string) { env["pr"].(map[string]any)["pr_link"] = "https://github.com/" + s }},
		{"/stat_url", func(env map[string]any, s string) { env["stat_url"] = "https://ci.example.com/" + s }},
		{"/other_details/runner", func(env map[string]any, s string) { env["other_details"] = map[string]any{"runner": "linux" + s} }},
		{"/other_details/steps/1/name", func(env map[string]any, s string) {
			env["other_details"] = map[string]any{"steps": []any{map[string]any{"name": "a"}, map[string]any{"name": s}}}
		}},
		{"/other_details/a" + "\u202e", func(env map[string]any, s string) { env["other_details"] = map[string]any{"a" + "\u202e": 1} }},
		// Beside a number no float64 holds, which the check once stopped at.
		{"/other_details/runner", func(env map[string]any, s string) {
			b, _ := json.Marshal("linux" + s)
			env["other_details"] = json.RawMessage(`{"n":1e309,"m":[-1e400],"runner":` + string(b) + `}`)
		}},
		{"/commit_sha", func(env map[string]any, s string) { env["commit_sha"] = strings.Repeat("a", 39) + s }},
		{"/category", func(env map[string]any, s string) { env["category"] = "trivy" + s }},
		{"/ref", func(env map[string]any, s string) { env["ref"] = "refs/heads/" + s }},
	}
	for _, route := range recordingRoutes {
		for _, f := range fields {
			for _, s := range bad {
				if f.pointer == "/other_details/a\u202e" && s != bad[0] {
					continue // the member's name is the case
				}
				env := envelope(func(env map[string]any) { f.set(env, s) })
				ptrs := expectProblem(t, h.recordAs(route.fn, route.body(env)), http.StatusUnprocessableEntity)
				if len(ptrs) != 1 || ptrs[0] != f.pointer {
					t.Errorf("%s, %s holding %q: pointers %v, want [%s]", route.fn, f.pointer, s, ptrs, f.pointer)
				}
			}
		}
	}
	// A finding's members on POST /pr/scan.
	for _, s := range bad {
		for member, value := range map[string]string{"rule": "aws" + s + "key", "path": "src/" + s + "a.go", "name": "sha256:" + s} {
			fd := map[string]any{"name": "sha256:aa", member: value}
			ptrs := expectProblem(t, h.recordAs("record-scan", recordingRoutes[0].body(envelope(func(env map[string]any) {
				env["findings"] = []any{map[string]any{"name": "sha256:bb"}, fd}
			}))), http.StatusUnprocessableEntity)
			if want := "/findings/1/" + member; len(ptrs) != 1 || ptrs[0] != want {
				t.Errorf("a finding's %s holding %q: pointers %v, want [%s]", member, s, ptrs, want)
			}
		}
	}
	if after := len(h.items()); after != before {
		t.Fatalf("the table went from %d to %d items", before, after)
	}
	// Text that only looks unusual is text: an emoji sequence joined by
	// ZWJ, Persian with its ZWNJ, accents, in a PR's title and the details.
	for _, route := range recordingRoutes {
		env := envelope(func(env map[string]any) {
			env["pr"].(map[string]any)["pr_name"] = "Fix 👩\u200d💻 login, می\u200cخواهم, café"
			env["other_details"] = map[string]any{"note": "👨\u200d👩\u200d👧 می\u200cخواهم"}
		})
		if resp := h.recordAs(route.fn, route.body(env)); resp.StatusCode >= 300 {
			t.Errorf("%s with a ZWJ emoji and a ZWNJ: %d %s", route.fn, resp.StatusCode, resp.Body)
		}
	}
}

// TestRecordingRefusesRepoNamesThatAreNotNames (issue 30, item 2): a
// repo_name that is not a repository's full name on its version-control
// system (dot segments, a query, a fragment, an empty segment, GitHub
// without an owner) is a 422 at /repo_name on every recording route, and
// nothing is stored; real names are accepted.
func TestRecordingRefusesRepoNamesThatAreNotNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	refused := map[string][]string{
		"github": {"../..", "../gists?", "o/r#frag", "..", ".", "acme/..", "acme/.", "../api", "acme", "acme/api/x", "/acme/api", "acme/api/",
			"acme//api", "acme/a pi", "acme/api?x=1", "acme/a%2Fb", `acme\api`, "ac.me/api", "acme/ápi"},
		"gitlab":    {"../..", "../gists?", "o/r#frag", "..", "group/../project", "group/./project", "project", "group//project", "group/project/"},
		"bitbucket": {"../..", "..", "ws/../r", "ws/r?x", "ws/r#x", "ws/a%2e%2e", `ws\r`, "ws//r"},
	}
	for vcType, names := range refused {
		for _, name := range names {
			for _, route := range recordingRoutes {
				env := envelope(func(env map[string]any) { env["vc_type"], env["repo_name"] = vcType, name })
				ptrs := expectProblem(t, h.recordAs(route.fn, route.body(env)), http.StatusUnprocessableEntity)
				if len(ptrs) != 1 || ptrs[0] != "/repo_name" {
					t.Errorf("%s, %s repo_name %q: pointers %v, want [/repo_name]", route.fn, vcType, name, ptrs)
				}
			}
		}
	}
	if after := len(h.items()); after != before {
		t.Fatalf("the table went from %d to %d items", before, after)
	}
	accepted := map[string][]string{
		"github":    {"acme/api", "Codertocat/Hello-World", "octo-org/.github", "acme/api.js", "acme_emu/my_repo"},
		"gitlab":    {"gitlab-org/gitlab", "acme/platform/payments", "a.b/c_d/e-f"},
		"bitbucket": {"workspace/repo", "Project One/repo"},
	}
	for vcType, names := range accepted {
		for _, name := range names {
			env := envelope(func(env map[string]any) { env["vc_type"], env["repo_name"] = vcType, name })
			if resp := h.recordAs("record-scan", recordingRoutes[0].body(env)); resp.StatusCode != http.StatusCreated {
				t.Errorf("%s repo_name %q: %d %s", vcType, name, resp.StatusCode, resp.Body)
			}
		}
	}
}
