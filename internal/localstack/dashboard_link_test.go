package localstack_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCommitStatusesLinkToMakeRunsDashboard (issue 30, item 8): make run
// (cmd/scangate-local) serves the dashboard itself, so with no
// DASHBOARD_URL its commit statuses link to that dashboard,
// http://{address}/#/pr/{id}; DASHBOARD_URL, when set, wins.
func TestCommitStatusesLinkToMakeRunsDashboard(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "scangate-local")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/scangate-local").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	template, err := filepath.Abs("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dashboard, want string }{
		{"", "http://{address}/#/pr/1"},
		{"https://dash.example.com/", "https://dash.example.com/#/pr/1"},
	} {
		var mu sync.Mutex
		var targets []string
		gl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				TargetURL string `json:"target_url"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			targets = append(targets, body.TargetURL)
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":1}`))
		}))
		defer gl.Close()
		_, api := scangateLocal(t, bin, "SCANGATE_ADDR=127.0.0.1:0", "SCANGATE_SEED=0", "SCANGATE_ADMIN_PASSWORD=link-test-password",
			"SCANGATE_TEMPLATE="+template, "DASHBOARD_URL="+c.dashboard)
		admin := loginToken(t, api, "admin", "link-test-password")
		if resp, body := do(t, "PUT", api+"/integrations/1", admin, `{"type":"gitlab","api_url":"`+gl.URL+`/api/v4","token":"glpat-standin"}`); resp.StatusCode != 200 {
			t.Fatalf("PUT /integrations/1: %d %s", resp.StatusCode, body)
		}
		sha := strings.Repeat("e", 40)
		if resp, body := do(t, "POST", api+"/pr/scan", admin, `{"scan_type":"SECRET","status":"completed","vc_type":"gitlab","vc_id":1,"vc_name":"gl",`+
			`"repo_id":5,"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"commit_sha":"`+sha+`",`+
			`"findings":[{"name":"sha256:aa"}]}`); resp.StatusCode != 201 {
			t.Fatalf("POST /pr/scan: %d %s", resp.StatusCode, body)
		}
		// The status is delivered in the background: wait for it (a bound
		// on a hang, not a timing).
		posted := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), targets...)
		}
		deadline := time.Now().Add(time.Minute)
		for len(posted()) == 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		want := strings.ReplaceAll(c.want, "{address}", strings.TrimSuffix(strings.TrimPrefix(api, "http://"), "/api"))
		if got := posted(); len(got) != 1 || got[0] != want {
			t.Errorf("DASHBOARD_URL %q: statuses linking to %q, want one linking to %s", c.dashboard, got, want)
		}
	}
}
