package localstack_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/receivertest"
	"github.com/scangate/scangate/internal/scangate"
)

// gateEvent is what a test reads of a pr.gate_changed a receiver got.
type gateEvent struct {
	PRID     int64   `json:"pr_id"`
	Blocked  bool    `json:"blocked"`
	HeadSHA  *string `json:"head_sha"`
	RepoName string  `json:"repo_name"`
	Number   int64   `json:"number"`
	Sequence int64   `json:"sequence"`
	Cause    string  `json:"cause"`
	Previous *struct {
		Blocked bool `json:"blocked"`
	} `json:"previous"`
}

// TestCommitStatusesAndWebhooksFollowTheGate: the gate changes of one
// pull request, each made over HTTP through the local stack — a recorded
// scan that blocks it, an allowlist that unblocks it, the allowlist
// deactivated (blocked again, without a new upload), reactivated to
// expire, its expiry (the stack's clock moved, the scheduled function
// run), a policy under which the finding no longer blocks — reach a
// receiver that verifies them with the Standard Webhooks library for
// Python (each once, sequences 1 to 6 with their causes, the scan's
// scan.recorded too) and GitHub's commit status API as checked against
// its published description: failure, success, failure, success,
// failure, success, the newest last. A status whose post failed (a
// wrong token) and is retried after a newer one was posted is dropped,
// never posted over it.
func TestCommitStatusesAndWebhooksFollowTheGate(t *testing.T) {
	t.Parallel()
	gh := gitHub(t, "ghp_standin")
	gh.AddRepo(2, "acme", "api")
	e := startEvents(t, func(o *localstack.Options, _ *ddbtest.Env) { o.DashboardURL = "https://scangate.example.com" })
	e.call(t, 200, "PUT", "/integrations/9", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_standin"}`)
	_, url := e.subscribe(t, `"pr.gate_changed","scan.recorded"`)
	sha := strings.Repeat("c", 40)
	step := func(method, path, body string, status int) {
		t.Helper()
		e.call(t, status, method, path, body)
		drain(t, e.stack, e.clock)
	}
	step("POST", "/pr/scan", `{"scan_type":"SECRET","status":"completed","vc_type":"github","vc_id":9,"vc_name":"gh","repo_id":2,`+
		`"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"commit_sha":"`+sha+`",`+
		`"findings":[{"name":"sha256:aa"}]}`, 201)
	id := e.allowlist(t, "sha256:aa")
	drain(t, e.stack, e.clock)
	step("PUT", "/whitelist/"+id, `{"active":false}`, 200)
	expires := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	step("PUT", "/whitelist/"+id, `{"active":true,"expires_at":"`+expires+`"}`, 200)
	e.clock.Advance(2 * time.Hour)
	if err := e.stack.RunScheduled(context.Background(), "ExpireAllowlistsFunction", e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	drain(t, e.stack, e.clock)
	step("PUT", "/gate/policy", `{"block_severity":{"SECRET":"critical"}}`, 200)

	if got := states(gh, sha); !slices.Equal(got, []string{"failure", "success", "failure", "success", "failure", "success"}) {
		t.Fatalf("statuses %v (refused %+v)", got, gh.Refusals())
	}
	log := receivertest.Read(t, url)
	if len(log.Rejected) != 0 {
		t.Errorf("the receiver refused %+v", log.Rejected)
	}
	var causes []string
	seen := map[string]bool{}
	for i, ev := range log.Events {
		if seen[ev.ID] {
			t.Errorf("event %s received twice", ev.ID)
		}
		seen[ev.ID] = true
		if ev.Type != scangate.EventGateChanged {
			continue
		}
		var g gateEvent
		if err := json.Unmarshal(ev.Data, &g); err != nil {
			t.Fatal(err)
		}
		if g.PRID != 1 || g.Number != 4 || g.RepoName != "acme/api" || g.HeadSHA == nil || *g.HeadSHA != sha ||
			g.Sequence != int64(len(causes)+1) || (g.Previous == nil) != (g.Sequence == 1) || g.Previous != nil && g.Previous.Blocked == g.Blocked {
			t.Errorf("gate change %d: %s", i, ev.Data)
		}
		causes = append(causes, g.Cause)
	}
	want := []string{scangate.CauseScan, scangate.CauseAllowlist, scangate.CauseAllowlist, scangate.CauseAllowlist, scangate.CauseExpiry, scangate.CausePolicy}
	if !slices.Equal(causes, want) || !slices.Equal(eventTypes(log)[6:], []string{scangate.EventScanRecorded}) {
		t.Errorf("causes %v, want %v; events %v", causes, want, eventTypes(log))
	}
	for _, a := range log.Attempts {
		documentedEvent(t, []byte(a.Body))
	}
	// The newest gate change is the gate as GET shows it now.
	gate := e.call(t, 200, "GET", "/pr/1/gate", "")
	if last := log.Events[len(log.Events)-1]; last.Type != scangate.EventGateChanged || !sameGate(t, last.Data, gate) {
		t.Errorf("the last event %s\nGET /pr/1/gate %s", last.Data, gate)
	}

	// A post that fails (a wrong token), then a newer gate posted once the
	// token is fixed: the failed one's retry is superseded.
	e.call(t, 200, "PUT", "/integrations/9", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_wrong"}`)
	e.call(t, 200, "PUT", "/gate/policy", `{}`) // blocks again
	settle(t, e.stack)                          // its first attempt fails; its retry waits
	e.call(t, 200, "PUT", "/integrations/9", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_standin"}`)
	step("PUT", "/gate/policy", `{"block_severity":{"SECRET":"critical"}}`, 200)
	if got := states(gh, sha); !slices.Equal(got[6:], []string{"success"}) {
		t.Errorf("statuses after a failed post and a newer gate: %v", got)
	}
	if r := gh.Refusals(); len(r) != 1 || r[0].Status != 401 {
		t.Errorf("the stand-in refused %+v; want the one post with the wrong token", r)
	}
	if rep, err := e.stack.Store.Check(context.Background()); err != nil || len(rep.Drift) > 0 {
		t.Errorf("check: %q %v", rep.Drift, err)
	}
}

// sameGate reports whether an event's data holds the gate resource gate:
// each of gate's members, equal.
func sameGate(t *testing.T, data json.RawMessage, gate string) bool {
	t.Helper()
	var d, g map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil || json.Unmarshal([]byte(gate), &g) != nil {
		return false
	}
	for k, v := range g {
		if !sameJSON(d[k], v) {
			t.Logf("%s: %s in the event, %s from GET", k, d[k], v)
			return false
		}
	}
	return len(g) > 0 && len(d) == len(g)+7 // vc_id, repo_id, repo_name, number, sequence, cause, previous
}

// documentedEvent checks an event's body against its type's schema in
// docs/openapi.yaml's webhooks.
func documentedEvent(t *testing.T, body []byte) {
	t.Helper()
	eventDocs.once.Do(func() {
		eventDocs.doc, eventDocs.err = openapi3.NewLoader().LoadFromFile("../../docs/openapi.yaml")
	})
	if eventDocs.err != nil {
		t.Fatal(eventDocs.err)
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	typ, _ := ev["type"].(string)
	hook := eventDocs.doc.Webhooks[typ]
	if hook == nil || hook.Post == nil {
		t.Errorf("docs/openapi.yaml has no webhook %q", typ)
		return
	}
	schema := hook.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(ev); err != nil {
		t.Errorf("a %s the document does not allow: %v\n%s", typ, err, body)
	}
}

// eventDocs is docs/openapi.yaml, loaded once for documentedEvent.
var eventDocs struct {
	once sync.Once
	doc  *openapi3.T
	err  error
}
