package localstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/logcheck"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/receivertest"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
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
	stack *localstack.Stack
	env   *ddbtest.Env
	api   string
	admin string
	clock *aheadClock
	logs  *logcheck.Sink
}

func startEvents(t *testing.T, opts ...func(*localstack.Options, *ddbtest.Env)) *eventStack {
	t.Helper()
	logs := logcheck.New(t) // no webhook secret, integration token or password in any line
	env := ddbtest.New(t)
	e := &eventStack{env: env, clock: &aheadClock{}, logs: logs}
	o := localstack.Options{Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin",
		AdminPassword: "admin-password-1", TokenTTL: clockedTokenTTL, Log: logs.Logger(),
		Now: e.clock.Now, RedeliverAfter: time.Millisecond}
	for _, opt := range opts {
		opt(&o, env)
	}
	stack, err := localstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	srv := httptest.NewServer(logs.Handler(stack.Handler))
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
	// The deliverer's metrics: two retries, one delivery, and its lag.
	if r, d, lag := e.metric(t, metrics.Deliveries, "retried"), e.metric(t, metrics.Deliveries, "delivered"), e.metric(t, metrics.DeliveryLatency, ""); r != 2 || d != 1 || lag <= 0 {
		t.Errorf("Deliveries retried %v, delivered %v, DeliveryLatency %v", r, d, lag)
	}
}

// metric sums a metric of the stack's log lines, of Outcome outcome
// (any when empty).
func (e *eventStack) metric(t *testing.T, name, outcome string) float64 {
	t.Helper()
	n := 0.0
	for _, l := range e.logs.Lines() {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		if v, ok := m[name].(float64); ok && (outcome == "" || m[metrics.DimOutcome] == outcome) {
			n += v
		}
	}
	return n
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
	if dead := e.stack.Lanes().Queue(deliverylane.Dead).Messages(); len(dead) != 0 {
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
	if dead := e.stack.Lanes().Queue(deliverylane.Dead).Messages(); len(dead) == 0 {
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
	// A deleted subscription's deliveries are no one's to send again: 404
	// as for its listing, no audit entry, nothing queued.
	e.call(t, 204, "DELETE", fmt.Sprintf("/webhooks/%d", id), "")
	e.call(t, 404, "POST", fmt.Sprintf("/webhooks/%d/deliveries/%s/redeliver", id, ds[0].ID), "")
	if after := e.call(t, 200, "GET", "/audit?action=webhook.redeliver", ""); strings.Count(after, ds[0].ID) != strings.Count(audit, ds[0].ID) {
		t.Errorf("a redelivery to a deleted subscription was audited: %s", after)
	}
	drain(t, e.stack, e.clock)
	if got := receivertest.Read(t, url); len(got.Attempts) != 2 {
		t.Errorf("the receiver of a deleted subscription got %d attempts, want 2", len(got.Attempts))
	}
}

// waitFor polls cond until it holds (a condition, not a timing: the bound
// only ends a test that would hang).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWebhookHangingReceiverDelaysNoOther: while one receiver holds every
// request it gets (it hangs until the test lets it answer; attempts may
// last 10 minutes here, so none ends before), another receives each
// event, events sent after the first one hung included: a batch's
// attempts run at once, each recorded on its own, and batches run side by
// side. Once the hanging receiver has failed, its next deliveries go to the
// retry queue at dispatch, never the first-attempt queue that healthy
// receivers share.
func TestWebhookHangingReceiverDelaysNoOther(t *testing.T) {
	t.Parallel()
	e := startEvents(t, func(o *localstack.Options, _ *ddbtest.Env) { o.AttemptTimeout = 10 * time.Minute })
	release := make(chan struct{})
	var mu sync.Mutex
	arrived := 0
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		mu.Unlock()
		select {
		case <-release:
			w.WriteHeader(http.StatusInternalServerError)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	released := false
	letGo := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(letGo) // before the server closes: cleanups run last first
	e.call(t, 201, "POST", "/webhooks", `{"url":"`+hang.URL+`/hook","events":["allowlist.created"]}`)
	_, url := e.subscribe(t, `"allowlist.created"`)

	e.allowlist(t, "sha256:01")
	waitFor(t, "the hanging receiver gets its first request", func() bool { mu.Lock(); defer mu.Unlock(); return arrived >= 1 })
	e.allowlist(t, "sha256:02")
	e.allowlist(t, "sha256:03")
	waitFor(t, "the other receiver gets all three events while the first hangs", func() bool { return len(receivertest.Read(t, url).Events) == 3 })
	if got := receivertest.Read(t, url); len(got.Rejected) != 0 || len(got.Attempts) != 3 {
		t.Errorf("the other receiver: %+v", got)
	}

	letGo()
	settle(t, e.stack)
	fast, retry := e.stack.Lanes().Queue(deliverylane.Fast).Sent(), e.stack.Lanes().Queue(deliverylane.Retry).Sent()
	e.allowlist(t, "sha256:04")
	settle(t, e.stack)
	if df, dr := e.stack.Lanes().Queue(deliverylane.Fast).Sent()-fast, e.stack.Lanes().Queue(deliverylane.Retry).Sent()-retry; df != 1 || dr != 1 {
		t.Errorf("a new event queued %d first attempts and %d retries; want 1 (the healthy receiver's) and 1 (the failing one's)", df, dr)
	}
	if got := receivertest.Read(t, url); len(got.Events) != 4 {
		t.Errorf("the other receiver has %d events, want 4", len(got.Events))
	}
}

// killAt makes the dispatcher's DynamoDB client fail, once, right after
// the call that kill picks has succeeded: its work until then stays done,
// and the test's dispatcher then dies without answering the stream, which
// retries its whole batch (as Lambda does for an invocation that crashed).
func killAt(kill func(op string, input any) bool, fired *atomic.Bool) func(*dynamodb.Options) {
	armed := &atomic.Bool{}
	armed.Store(true)
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("kill",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleInitialize(ctx, in)
					if err == nil && kill(middleware.GetOperationName(ctx), in.Parameters) && armed.CompareAndSwap(true, false) {
						fired.Store(true)
						return out, md, errors.New("the dispatcher was killed")
					}
					return out, md, err
				}), middleware.After)
		})
	}
}

// TestEventsExactlyOnceWhenTheDispatcherIsKilled: three changes whose
// events reach the dispatcher in one batch; the dispatcher dies while
// dispatching one of them (after creating its delivery, before queueing
// it; or after queueing it, before marking it dispatched), the stream
// runs the batch again, and the receiver, deduplicating by id, has each
// event exactly once. The events finished before the death are not done
// again (on the bus once, attempted once): the run starts over at the
// first unfinished record, and skips what was finished after it.
func TestEventsExactlyOnceWhenTheDispatcherIsKilled(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		kill func(op string, input any) (string, bool) // the event of a call, and whether it is one that may be killed
	}{
		{"after the delivery is created", func(_ string, input any) (string, bool) {
			in, ok := input.(*dynamodb.PutItemInput)
			if !ok {
				return "", false
			}
			return strings.CutPrefix(in.Item["SK"].(*types.AttributeValueMemberS).Value, "DELIVERY#")
		}},
		{"after the delivery is queued", func(op string, input any) (string, bool) {
			in, ok := input.(*dynamodb.UpdateItemInput)
			if !ok || op != "UpdateItem" {
				return "", false
			}
			return strings.CutPrefix(in.Key["PK"].(*types.AttributeValueMemberS).Value, "EVENT#")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var fired atomic.Bool
			var n atomic.Int64
			var killed atomic.Value // the event being dispatched when the dispatcher died
			kill := killAt(func(op string, input any) bool {
				id, ok := c.kill(op, input)
				if ok && n.Add(1) == 2 {
					killed.Store(id)
					return true
				}
				return false
			}, &fired)
			e := startEvents(t, func(o *localstack.Options, env *ddbtest.Env) {
				o.StoreFor = func(fn string, stream func(*dynamodb.Options)) *store.Store {
					if fn == "DispatchEventsFunction" {
						return env.Recorder(t, func(string, any) {}, stream, kill)
					}
					return env.Recorder(t, func(string, any) {}, stream)
				}
				o.Operations = []ops.Operation{{Name: "dispatch-events", Stream: func(d ops.Deps) trigger.StreamHandler {
					real := dispatch.NewDispatcher(d.Store(), d.Bus(), d.Queues(), d.Now, d.Log())
					return func(ctx context.Context, ev awsevents.DynamoDBEvent) (awsevents.DynamoDBEventResponse, error) {
						resp, err := real(ctx, ev)
						if fired.CompareAndSwap(true, false) {
							return awsevents.DynamoDBEventResponse{}, errors.New("the dispatcher died")
						}
						return resp, err
					}
				}}}
			})
			_, url := e.subscribe(t, `"allowlist.created"`)
			release := e.stack.Stream("DispatchEventsFunction").Hold()
			for _, name := range []string{"sha256:k1", "sha256:k2", "sha256:k3"} {
				e.allowlist(t, name)
			}
			release()
			drain(t, e.stack, e.clock)
			dead, _ := killed.Load().(string)
			if dead == "" {
				t.Fatal("the kill never came")
			}
			got := receivertest.Read(t, url)
			if len(got.Events) != 3 || len(got.Rejected) != 0 {
				t.Fatalf("the receiver has %d events (%d rejected), want 3", len(got.Events), len(got.Rejected))
			}
			onBus := map[string]int{}
			for _, en := range e.stack.Bus().Entries() {
				var ev struct{ ID string }
				_ = json.Unmarshal(en.Detail, &ev)
				onBus[ev.ID]++
			}
			attempts := map[string]int{}
			for _, a := range got.Attempts {
				attempts[a.WebhookID]++
			}
			for _, ev := range got.Events {
				switch {
				case onBus[ev.ID] < 1:
					t.Errorf("event %s is not on the bus", ev.ID)
				case ev.ID != dead && (onBus[ev.ID] != 1 || attempts[ev.ID] != 1):
					t.Errorf("event %s, finished when the dispatcher died: %d times on the bus, %d attempts; want 1 and 1",
						ev.ID, onBus[ev.ID], attempts[ev.ID])
				}
			}
		})
	}
}

// rebinding resolves names for the outbound rules: rebind.test to a public
// address until flipped, then to 127.0.0.1 (DNS rebinding); private.test
// to a private address; nothing else.
type rebinding struct{ flipped atomic.Bool }

func (r *rebinding) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch {
	case host == "rebind.test" && r.flipped.Load():
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case host == "rebind.test":
		return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
	case host == "private.test":
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestWebhookAddressesCheckedAtConnect: with loopback not allowed (the
// deployed rules), subscribing refuses http, credentials in the URL,
// loopback, private, link-local, metadata and unique-local addresses and a
// name that resolves to one (422 at /url). A name that resolved to a
// public address when it was subscribed and resolves to 127.0.0.1 when
// delivered to is refused when the connection is made: no connection
// reaches the listener there, and the delivery's attempts say why.
func TestWebhookAddressesCheckedAtConnect(t *testing.T) {
	t.Parallel()
	names := &rebinding{}
	e := startEvents(t, func(o *localstack.Options, _ *ddbtest.Env) { o.StrictEgress, o.Resolver = true, names })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	for _, u := range []string{"http://example.com/hook", "https://user:pw@example.com/hook", fmt.Sprintf("http://127.0.0.1:%d/", port),
		"https://127.0.0.1/", "https://localhost/", "https://10.1.2.3/", "https://192.168.0.1/", "https://169.254.169.254/latest",
		"https://[fd00:ec2::254]/", "https://[fd12::1]/", "https://[::1]/", "https://[fe80::1]/", "https://private.test/hook",
		"https://example.com:0/hook", "https://example.com:99999/hook"} {
		resp, body := do(t, "POST", e.api+"/webhooks", e.admin, `{"url":"`+u+`","events":["allowlist.created"]}`)
		if resp.StatusCode != 422 || !strings.Contains(body, `"pointer":"/url"`) {
			t.Errorf("subscribe %s: %d %s", u, resp.StatusCode, body)
		}
	}
	body := e.call(t, 201, "POST", "/webhooks", fmt.Sprintf(`{"url":"https://rebind.test:%d/hook","events":["allowlist.created"]}`, port))
	id := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)[1]
	names.flipped.Store(true)
	e.allowlist(t, "sha256:55")
	drain(t, e.stack, e.clock)
	var page struct {
		Items []delivery `json:"items"`
	}
	_ = json.Unmarshal([]byte(e.call(t, 200, "GET", "/webhooks/"+id+"/deliveries", "")), &page)
	if len(page.Items) != 1 || page.Items[0].Status != "failed" || page.Items[0].Attempt != 8 || page.Items[0].ResponseStatus != nil ||
		page.Items[0].Error == nil || !strings.Contains(*page.Items[0].Error, "refused: 127.0.0.1 is a loopback address") {
		t.Errorf("deliveries %+v", page.Items)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections reached 127.0.0.1", n)
	}
}

// TestWebhookSecretsStaySealed: the signing secret is shown once, when the
// subscription is created (and a new one when it is rotated), and the
// integration's token never; no answer, audit entry or item of the table
// holds either in plain text. Bad bodies are refused with a pointer and
// change nothing; only admins may manage subscriptions and integrations.
func TestWebhookSecretsStaySealed(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	created := e.call(t, 201, "POST", "/webhooks", `{"url":"http://127.0.0.1:9/hook","events":["webhook.test"],"description":"d"}`)
	secret := regexp.MustCompile(`"secret":"(whsec_[^"]+)"`).FindStringSubmatch(created)[1]
	rotated := e.call(t, 200, "POST", "/webhooks/1/rotate-secret", "")
	secret2 := regexp.MustCompile(`"secret":"(whsec_[^"]+)"`).FindStringSubmatch(rotated)[1]
	const token = "ghp_0123456789abcdefSECRETtoken"
	in := e.call(t, 200, "PUT", "/integrations/7", `{"type":"github","api_url":"https://ghe.example.com/api/v3","token":"`+token+`"}`)
	if !strings.Contains(in, `"token_set":true`) || !strings.Contains(in, `"api_url":"https://ghe.example.com/api/v3"`) {
		t.Errorf("integration: %s", in)
	}
	secrets := []string{secret, strings.TrimPrefix(secret, "whsec_"), secret2, strings.TrimPrefix(secret2, "whsec_"), token}
	for _, path := range []string{"/webhooks", "/webhooks/1", "/integrations/7", "/audit", "/webhooks/1/deliveries"} {
		got := e.call(t, 200, "GET", path, "")
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("GET %s shows a secret", path)
			}
		}
	}
	items, err := e.env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &e.env.Table})
	if err != nil {
		t.Fatal(err)
	}
	sealed := 0
	for _, it := range items.Items {
		text := fmt.Sprint(it)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("the item %s holds a secret in plain text", text[:min(len(text), 80)])
			}
		}
		for _, a := range []string{"secret", "prev_secret", "token"} {
			if v, ok := it[a].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, "v1.") {
				sealed++
			}
		}
	}
	if sealed != 3 {
		t.Errorf("%d sealed values in the table, want 3 (the secret, the previous one, the token)", sealed)
	}

	// Bad input: 422 with a pointer, nothing changed.
	for _, c := range []struct{ method, path, body, pointer string }{
		{"POST", "/webhooks", `{"events":["webhook.test"]}`, "/url"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":[]}`, "/events"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":["scan.done"]}`, "/events/0"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":["webhook.test","webhook.test"]}`, "/events/1"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":["webhook.test"],"active":null}`, "/active"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":["webhook.test"],"secret":"whsec_x"}`, "/secret"},
		{"POST", "/webhooks", `{"url":"http://127.0.0.1:9/","events":["webhook.test"],"description":"` + strings.Repeat("d", 1001) + `"}`, "/description"},
		{"PATCH", "/webhooks/1", `{"url":"ftp://example.com/"}`, "/url"},
		{"PUT", "/integrations/8", `{"type":"github"}`, "/token"},
		{"PUT", "/integrations/8", `{"type":"bitbucket","token":"t"}`, "/type"},
		{"PUT", "/integrations/8", `{"type":"github","api_url":"https://169.254.169.254/","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"github","token":"two words"}`, "/token"},
		// An API's root holds no query, fragment or credentials (issue 30, item 6).
		{"PUT", "/integrations/8", `{"type":"github","api_url":"https://ghe.example.com/api/v3?x=1","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"github","api_url":"https://ghe.example.com/api/v3?","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"gitlab","api_url":"https://gitlab.example.com/api/v4#frag","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"gitlab","api_url":"https://gitlab.example.com/api/v4#","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"github","api_url":"https://user:pw@ghe.example.com/api/v3","token":"t"}`, "/api_url"},
		{"PUT", "/integrations/8", `{"type":"github","api_url":"https://user@ghe.example.com/api/v3","token":"t"}`, "/api_url"},
	} {
		resp, body := do(t, c.method, e.api+c.path, e.admin, c.body)
		if resp.StatusCode != 422 || !strings.Contains(body, `"pointer":"`+c.pointer+`"`) {
			t.Errorf("%s %s %.80s: %d %s", c.method, c.path, c.body, resp.StatusCode, body)
		}
	}
	e.call(t, 404, "PATCH", "/webhooks/99", `{"description":"x"}`)
	e.call(t, 404, "GET", "/integrations/8", "")
	if list := e.call(t, 200, "GET", "/webhooks", ""); strings.Count(list, `"id":`) != 1 {
		t.Errorf("webhooks after refused requests: %s", list)
	}
	// Only admins.
	e.call(t, 201, "POST", "/users", `{"username":"uma","user_email":"uma@example.com","password":"password-123","role":"user"}`)
	user := loginToken(t, e.api, "uma", "password-123")
	for _, r := range [][2]string{{"GET", "/webhooks"}, {"GET", "/webhooks/1"}, {"POST", "/webhooks/1/test"}, {"GET", "/integrations/7"},
		{"GET", "/webhooks/1/deliveries"}} {
		if resp, body := do(t, r[0], e.api+r[1], user, ""); resp.StatusCode != 403 {
			t.Errorf("%s %s as a user: %d %s", r[0], r[1], resp.StatusCode, body)
		}
	}
}
