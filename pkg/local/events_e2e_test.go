package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/receivertest"
	"github.com/scangate/scangate/pkg/lane"
	"github.com/scangate/scangate/pkg/local"
)

// The tests named TestWebhook... deliver events over HTTP from the local
// stack (its stream, queues and functions) to receivers; those that
// deliver to the receiver written in Python (internal/receivertest), which
// verifies each signature with the Standard Webhooks library for Python,
// are run by make test-webhooks and skipped without it.

// eventStack is a local stack for the event tests: its clock runs ahead of
// the real time when a test moves it (aheadClock), http to loopback is
// allowed (the local default).
type eventStack struct {
	stack *local.Stack
	env   *ddbtest.Env
	api   string
	admin string
	clock *aheadClock
}

func startEvents(t *testing.T, opts ...func(*local.Options)) *eventStack {
	t.Helper()
	env := ddbtest.New(t)
	e := &eventStack{env: env, clock: &aheadClock{}}
	o := local.Options{Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin",
		AdminPassword: "admin-password-1", TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Now: e.clock.Now, RedeliverAfter: time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	stack, err := local.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	srv := httptest.NewServer(stack.Handler)
	t.Cleanup(srv.Close)
	e.stack, e.api = stack, srv.URL+"/api"
	e.admin = loginToken(t, e.api, "admin", "admin-password-1")
	return e
}

// call sends a request as the admin and wants status.
func (e *eventStack) call(t *testing.T, status int, method, path, body string) string {
	t.Helper()
	resp, got := do(t, method, e.api+path, e.admin, body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, got, status)
	}
	return got
}

// subscribe creates a subscription to types and points it at the Python
// receiver it starts with the subscription's secret (and args); it
// returns the subscription's id and the receiver's URL.
func (e *eventStack) subscribe(t *testing.T, types string, args ...string) (int64, string) {
	t.Helper()
	var w struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
	body := e.call(t, 201, "POST", "/webhooks", `{"url":"http://127.0.0.1:9/not-yet","events":[`+types+`]}`)
	if err := json.Unmarshal([]byte(body), &w); err != nil || w.ID == 0 || !strings.HasPrefix(w.Secret, "whsec_") {
		t.Fatalf("create webhook: %s", body)
	}
	url := receivertest.Start(t, w.Secret, args...)
	e.call(t, 200, "PATCH", fmt.Sprintf("/webhooks/%d", w.ID), `{"url":"`+url+`/hook"}`)
	return w.ID, url
}

// allowlist creates a secret's allowlist and returns its id.
func (e *eventStack) allowlist(t *testing.T, name string) string {
	t.Helper()
	body := e.call(t, 201, "POST", "/whitelist", `{"type":"SECRET","name":"`+name+`","global_":true,"reason":"false_positive"}`)
	return regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)[1]
}

// deliveries lists a subscription's deliveries.
func (e *eventStack) deliveries(t *testing.T, id int64) []delivery {
	t.Helper()
	var page struct {
		Items []delivery `json:"items"`
	}
	if err := json.Unmarshal([]byte(e.call(t, 200, "GET", fmt.Sprintf("/webhooks/%d/deliveries", id), "")), &page); err != nil {
		t.Fatal(err)
	}
	return page.Items
}

type delivery struct {
	ID             string  `json:"id"`
	EventID        string  `json:"event_id"`
	Type           string  `json:"type"`
	Status         string  `json:"status"`
	Attempt        int     `json:"attempt"`
	ResponseStatus *int    `json:"response_status"`
	Error          *string `json:"error"`
}

func eventTypes(l receivertest.Log) []string {
	var out []string
	for _, e := range l.Events {
		out = append(out, e.Type)
	}
	slices.Sort(out)
	return out
}

// TestWebhookEventsReachAPythonReceiver: an allowlist created and updated
// reach, signed, a receiver that verifies with another language's
// Standard Webhooks library, with the allowlist as GET /whitelist lists it;
// a subscription to allowlist.updated only gets that one; each event is on
// the event bus with its type and the very body delivered; the deliveries
// list each delivered at its first attempt.
func TestWebhookEventsReachAPythonReceiver(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	both, url := e.subscribe(t, `"allowlist.created","allowlist.updated"`)
	_, updatesURL := e.subscribe(t, `"allowlist.updated"`)
	id := e.allowlist(t, "sha256:aa")
	e.call(t, 200, "PUT", "/whitelist/"+id, `{"comment":"reviewed"}`)
	drain(t, e.stack, e.clock)

	got := receivertest.Read(t, url)
	if want := []string{"allowlist.created", "allowlist.updated"}; !slices.Equal(eventTypes(got), want) || len(got.Rejected) != 0 || len(got.Attempts) != 2 {
		t.Fatalf("receiver of both: %+v", got)
	}
	if only := receivertest.Read(t, updatesURL); !slices.Equal(eventTypes(only), []string{"allowlist.updated"}) || len(only.Attempts) != 1 {
		t.Errorf("receiver of allowlist.updated: %+v", only)
	}
	// The data of the newest event is the allowlist as listed now.
	var listed struct {
		Items []json.RawMessage `json:"items"`
	}
	_ = json.Unmarshal([]byte(e.call(t, 200, "GET", "/whitelist", "")), &listed)
	for _, ev := range got.Events {
		if ev.Type == "allowlist.updated" && !sameJSON(ev.Data, listed.Items[0]) {
			t.Errorf("allowlist.updated data %s\nGET /whitelist lists %s", ev.Data, listed.Items[0])
		}
	}
	// The bus has each event, with the bytes the receiver verified.
	bodies := map[string]string{}
	for _, a := range got.Attempts {
		bodies[a.WebhookID] = a.Body
	}
	entries := e.stack.Bus().Entries()
	if len(entries) != 2 {
		t.Fatalf("%d events on the bus, want 2", len(entries))
	}
	for _, en := range entries {
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(en.Detail, &ev)
		if en.Type != ev.Type || bodies[ev.ID] != string(en.Detail) {
			t.Errorf("bus entry %s %s; delivered %s", en.Type, en.Detail, bodies[ev.ID])
		}
	}
	for _, d := range e.deliveries(t, both) {
		if d.Status != "delivered" || d.Attempt != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 204 || d.ID != d.EventID {
			t.Errorf("delivery %+v", d)
		}
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

// TestWebhookRetriesAfter500WithTheSameID: a receiver that answers 500
// twice gets the delivery again after the schedule's waits (the test
// moves the clock), with the same webhook-id and body, and verifies it
// each time; the delivery ends delivered at its third attempt and the
// subscription's failure streak ends.
func TestWebhookRetriesAfter500WithTheSameID(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	id, url := e.subscribe(t, `"allowlist.created"`, "--fail-first", "2")
	e.allowlist(t, "sha256:bb")
	drain(t, e.stack, e.clock)
	got := receivertest.Read(t, url)
	if len(got.Attempts) != 3 || len(got.Events) != 1 || len(got.Rejected) != 0 {
		t.Fatalf("receiver log %+v", got)
	}
	for i, a := range got.Attempts {
		if a.WebhookID != got.Events[0].ID || a.Body != got.Attempts[0].Body || a.Status != []int{500, 500, 204}[i] {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
	ds := e.deliveries(t, id)
	if len(ds) != 1 || ds[0].Status != "delivered" || ds[0].Attempt != 3 {
		t.Errorf("deliveries %+v", ds)
	}
	if w := e.call(t, 200, "GET", fmt.Sprintf("/webhooks/%d", id), ""); !strings.Contains(w, `"failing_since":null`) {
		t.Errorf("the streak did not end: %s", w)
	}
}

// TestWebhookGoneDisables: a receiver that answers 410 disables its
// subscription at once (an audit entry of the system's), its delivery is
// failed and not retried nor dead-lettered, and later events do not reach
// it.
func TestWebhookGoneDisables(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	id, url := e.subscribe(t, `"allowlist.created"`, "--gone")
	e.allowlist(t, "sha256:cc")
	drain(t, e.stack, e.clock)
	w := e.call(t, 200, "GET", fmt.Sprintf("/webhooks/%d", id), "")
	if !strings.Contains(w, `"active":false`) || !strings.Contains(w, `"disabled_reason":"the receiver answered 410 Gone"`) {
		t.Fatalf("webhook after 410: %s", w)
	}
	audit := e.call(t, 200, "GET", fmt.Sprintf("/audit?target_type=webhook&target_id=%d&action=webhook.update", id), "")
	if !strings.Contains(audit, `"actor":null`) || !strings.Contains(audit, `"disabled_reason":{"to":"the receiver answered 410 Gone"}`) {
		t.Errorf("audit of the disabling: %s", audit)
	}
	e.allowlist(t, "sha256:cd")
	drain(t, e.stack, e.clock)
	if got := receivertest.Read(t, url); len(got.Attempts) != 1 || got.Attempts[0].Status != 410 {
		t.Errorf("receiver log %+v, want the one 410", got)
	}
	if ds := e.deliveries(t, id); len(ds) != 1 || ds[0].Status != "failed" || ds[0].Attempt != 1 {
		t.Errorf("deliveries %+v", ds)
	}
	if dead := e.stack.Lanes().Queue(lane.Dead).Messages(); len(dead) != 0 {
		t.Errorf("dead-lettered %v", dead)
	}
}

// TestWebhookThreeDaysOfFailuresDisable: a receiver that always fails gets
// each delivery 8 times over more than 24 hours, then the delivery is
// failed and dead-lettered (the alarm's queue); once its failures have
// lasted 3 days the subscription is disabled, and its deliveries stop.
func TestWebhookThreeDaysOfFailuresDisable(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	var mu sync.Mutex
	var arrivals []time.Time // by the stack's clock
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, e.clock.Now())
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(recv.Close)
	body := e.call(t, 201, "POST", "/webhooks", `{"url":"`+recv.URL+`","events":["allowlist.created"]}`)
	id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)[1]
	for i := 0; i < 4; i++ {
		e.allowlist(t, fmt.Sprintf("sha256:d%d", i))
		drain(t, e.stack, e.clock)
	}
	w := e.call(t, 200, "GET", "/webhooks/"+id, "")
	if !strings.Contains(w, `"active":false`) || !strings.Contains(w, `for 72h0m0s"`) {
		t.Fatalf("webhook after days of failures: %s", w)
	}
	var page struct {
		Items []delivery `json:"items"`
	}
	_ = json.Unmarshal([]byte(e.call(t, 200, "GET", "/webhooks/"+id+"/deliveries", "")), &page)
	first := page.Items[len(page.Items)-1]
	if first.Status != "failed" || first.Attempt != 8 || first.ResponseStatus == nil || *first.ResponseStatus != 503 {
		t.Errorf("the first delivery %+v, want failed after 8 attempts", first)
	}
	mu.Lock()
	span := arrivals[len(arrivals)-1].Sub(arrivals[0])
	n := len(arrivals)
	mu.Unlock()
	if span < 72*time.Hour {
		t.Errorf("attempts spanned %s before the subscription was disabled", span)
	}
	if dead := e.stack.Lanes().Queue(lane.Dead).Messages(); len(dead) == 0 {
		t.Error("no delivery was dead-lettered")
	}
	// Disabled: a new event makes no attempt.
	e.allowlist(t, "sha256:d9")
	drain(t, e.stack, e.clock)
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != n {
		t.Errorf("%d attempts after the subscription was disabled", len(arrivals)-n)
	}
}

// TestWebhookSecretRotation: after a rotation the previous secret keeps
// signing beside the new one for 24 hours, so a receiver that has either
// verifies the same delivery (sent again by redeliver, same id and body);
// once the 24 hours have passed only the new one signs. The answer of the
// rotation shows the new secret once.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	id, oldURL := e.subscribe(t, `"allowlist.created"`)
	rotated := e.call(t, 200, "POST", fmt.Sprintf("/webhooks/%d/rotate-secret", id), "")
	secret := regexp.MustCompile(`"secret":"(whsec_[^"]+)"`).FindStringSubmatch(rotated)
	if secret == nil || !strings.Contains(rotated, `"previous_secret_until":"`) {
		t.Fatalf("rotation: %s", rotated)
	}
	e.allowlist(t, "sha256:ee")
	drain(t, e.stack, e.clock)
	old := receivertest.Read(t, oldURL)
	if len(old.Events) != 1 || len(old.Rejected) != 0 {
		t.Fatalf("the receiver with the old secret: %+v", old)
	}
	newURL := receivertest.Start(t, secret[1])
	redeliver := func(url string) {
		e.call(t, 200, "PATCH", fmt.Sprintf("/webhooks/%d", id), `{"url":"`+url+`/hook"}`)
		e.call(t, 202, "POST", fmt.Sprintf("/webhooks/%d/deliveries/%s/redeliver", id, old.Events[0].ID), "")
		drain(t, e.stack, e.clock)
	}
	redeliver(newURL)
	if got := receivertest.Read(t, newURL); len(got.Events) != 1 || got.Events[0].ID != old.Events[0].ID || len(got.Rejected) != 0 ||
		got.Attempts[0].Body != old.Attempts[0].Body {
		t.Fatalf("the receiver with the new secret: %+v", got)
	}
	// 24 hours later the old secret no longer signs.
	e.clock.Advance(25 * time.Hour)
	redeliver(oldURL)
	got := receivertest.Read(t, oldURL)
	for _, r := range got.Rejected {
		if !strings.Contains(r.Error, "No matching signature") {
			t.Errorf("rejected for %s", r.Error)
		}
	}
	if len(got.Rejected) != 8 || len(got.Events) != 1 {
		t.Errorf("the receiver with the old secret, after 24 hours, refused %d attempts; want the 8 of the delivery", len(got.Rejected))
	}
	if ds := e.deliveries(t, id); ds[0].Status != "failed" || *ds[0].ResponseStatus != 400 {
		t.Errorf("the delivery the receiver refused: %+v", ds[0])
	}
	if w := e.call(t, 200, "GET", fmt.Sprintf("/webhooks/%d", id), ""); strings.Contains(w, "whsec_") || !strings.Contains(w, `"previous_secret_until":null`) {
		t.Errorf("GET shows %s", w)
	}
}

// TestWebhookRedeliver: a delivered event is delivered again on request,
// with the same webhook-id and body (the receiver, deduplicating by id,
// keeps one event); an unknown delivery is 404, a malformed id 422, and a
// subscription's deliveries are the admins' only.
func TestWebhookRedeliver(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	id, url := e.subscribe(t, `"allowlist.created"`)
	e.allowlist(t, "sha256:ff")
	drain(t, e.stack, e.clock)
	ds := e.deliveries(t, id)
	if len(ds) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
	again := e.call(t, 202, "POST", fmt.Sprintf("/webhooks/%d/deliveries/%s/redeliver", id, ds[0].ID), "")
	if !strings.Contains(again, `"status":"pending"`) || !strings.Contains(again, `"attempt":0`) {
		t.Errorf("redeliver: %s", again)
	}
	drain(t, e.stack, e.clock)
	got := receivertest.Read(t, url)
	if len(got.Attempts) != 2 || len(got.Events) != 1 || got.Attempts[0].WebhookID != got.Attempts[1].WebhookID ||
		got.Attempts[0].Body != got.Attempts[1].Body {
		t.Errorf("receiver log %+v", got)
	}
	e.call(t, 404, "POST", fmt.Sprintf("/webhooks/%d/deliveries/01ARZ3NDEKTSV4RRFFQ69G5FAV/redeliver", id), "")
	e.call(t, 422, "POST", fmt.Sprintf("/webhooks/%d/deliveries/nope/redeliver", id), "")
	audit := e.call(t, 200, "GET", "/audit?action=webhook.redeliver", "")
	if !strings.Contains(audit, ds[0].ID) {
		t.Errorf("audit: %s", audit)
	}
}
