package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// The dispatcher's decisions that the end-to-end tests (internal/localstack) do not
// reach: the bus's batches by count and size, where a gate change goes
// without a commit or an integration, the integrations read once, and a
// retried batch's deliveries found already attempted.

// fakeStore is the dispatcher's store: events by id, subscriptions,
// integrations by vc_id, and the deliveries created.
type fakeStore struct {
	mu           sync.Mutex
	events       map[string]store.StoredEvent
	webhooks     []scangate.Webhook
	integrations map[int64]scangate.Integration
	deliveries   map[string]scangate.Delivery // by destination and event
	integReads   int
	failCreate   string // an event id whose deliveries cannot be created
}

func (s *fakeStore) Events(_ context.Context, ids []string) ([]store.StoredEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.StoredEvent
	for _, id := range ids {
		if e, ok := s.events[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *fakeStore) MarkDispatched(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.events[id]
	e.Dispatched = true
	s.events[id] = e
	return nil
}

func (s *fakeStore) Webhooks(context.Context) ([]scangate.Webhook, error) { return s.webhooks, nil }

func (s *fakeStore) Integration(_ context.Context, vcID int64) (scangate.Integration, error) {
	time.Sleep(20 * time.Millisecond) // a read takes a while: concurrent events of one vc_id overlap it
	s.mu.Lock()
	defer s.mu.Unlock()
	s.integReads++
	in, ok := s.integrations[vcID]
	if !ok {
		return scangate.Integration{}, scangate.Errorf(scangate.KindNotFound, "no integration %d", vcID)
	}
	return in, nil
}

func (s *fakeStore) CreateDelivery(_ context.Context, d scangate.Delivery) (scangate.Delivery, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.EventID == s.failCreate {
		return scangate.Delivery{}, false, errors.New("the table is away")
	}
	k := fmt.Sprint(d.To, d.EventID)
	if old, ok := s.deliveries[k]; ok {
		return old, false, nil
	}
	s.deliveries[k] = d
	return d, true, nil
}

// fakeBus keeps the entries of each Put.
type fakeBus struct {
	mu    sync.Mutex
	calls [][]dispatch.Entry
}

func (b *fakeBus) Put(_ context.Context, entries []dispatch.Entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, entries)
	return nil
}

// fakeQueues keeps what each lane was sent.
type fakeQueues struct {
	mu   sync.Mutex
	sent map[deliverylane.Lane][]string
}

func (q *fakeQueues) Send(_ context.Context, l deliverylane.Lane, body string, _ time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent[l] = append(q.sent[l], body)
	return nil
}
func (q *fakeQueues) Hide(context.Context, deliverylane.Lane, string, time.Duration) error {
	return nil
}
func (q *fakeQueues) LaneOf(string) (deliverylane.Lane, bool) { return "", false }

type fixture struct {
	st  *fakeStore
	bus *fakeBus
	q   *fakeQueues
	d   dispatch.Dispatcher
}

func newFixture(webhooks ...scangate.Webhook) *fixture {
	f := &fixture{st: &fakeStore{events: map[string]store.StoredEvent{}, webhooks: webhooks, integrations: map[int64]scangate.Integration{},
		deliveries: map[string]scangate.Delivery{}}, bus: &fakeBus{}, q: &fakeQueues{sent: map[deliverylane.Lane][]string{}}}
	f.d = dispatch.Dispatcher{Store: f.st, Bus: f.bus, Queues: f.q, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	return f
}

// event stores an event of type typ with data, and returns its stream
// record.
func (f *fixture) event(id, typ string, data any) events.DynamoDBEventRecord {
	b, _ := json.Marshal(data)
	f.st.events[id] = store.StoredEvent{Event: scangate.Event{ID: id, Type: typ, OccurredAt: scangate.At(time.Now()), Data: b}}
	return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: "seq-" + id,
		Keys: map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute(store.EventPrefix + id), "SK": events.NewStringAttribute("EVENT")}}}
}

func (f *fixture) handle(t *testing.T, recs ...events.DynamoDBEventRecord) events.DynamoDBEventResponse {
	t.Helper()
	resp, err := f.d.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestBusBatchesByCountAndSize: events go on the bus at most 10 a call
// (PutEvents' limit), and fewer when their bodies would pass 200 KiB a
// call (EventBridge takes 256 KiB), each event once, in the stream's order.
func TestBusBatchesByCountAndSize(t *testing.T) {
	t.Parallel()
	f := newFixture()
	var recs []events.DynamoDBEventRecord
	for i := range 23 {
		recs = append(recs, f.event(fmt.Sprintf("01A%03d", i), scangate.EventAllowlistCreated, map[string]int{"id": i}))
	}
	big := strings.Repeat("x", 90<<10)
	for i := range 5 {
		recs = append(recs, f.event(fmt.Sprintf("01B%03d", i), scangate.EventScanRecorded, map[string]string{"other_details": big}))
	}
	if resp := f.handle(t, recs...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %+v", resp.BatchItemFailures)
	}
	var sizes []int
	var order []string
	for _, c := range f.bus.calls {
		sizes = append(sizes, len(c))
		bytes := 0
		for _, e := range c {
			bytes += len(e.Detail)
			var ev struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(e.Detail, &ev)
			order = append(order, ev.ID)
		}
		if bytes > 200<<10 {
			t.Errorf("a call of %d bytes", bytes)
		}
	}
	// Chunks of 50 records: the 28 are one chunk.
	if want := []int{10, 10, 5, 2, 1}; !slices.Equal(sizes, want) {
		t.Errorf("calls of %v events; want %v", sizes, want)
	}
	if !slices.IsSorted(order) || len(order) != 28 {
		t.Errorf("put %v", order)
	}
}

// TestGateChangeDestinations: a pr.gate_changed goes to the subscriptions
// that take it (a failing one in the retry lane, an inactive one
// nowhere) and to the integration of its vc_id only when its gate names a
// commit and the integration exists; the integrations are read once an
// invocation, whatever the number of events; webhook.test goes to its one
// subscription, inactive or not, whatever its types.
func TestGateChangeDestinations(t *testing.T) {
	t.Parallel()
	since := scangate.At(time.Now())
	f := newFixture(
		scangate.Webhook{ID: 1, Active: true, Events: []string{scangate.EventGateChanged}},
		scangate.Webhook{ID: 2, Active: true, Events: []string{scangate.EventGateChanged}, FailingSince: &since},
		scangate.Webhook{ID: 3, Active: false, Events: []string{scangate.EventGateChanged}},
		scangate.Webhook{ID: 4, Active: true, Events: []string{scangate.EventScanRecorded}},
	)
	f.st.integrations[7] = scangate.Integration{VcID: 7, Type: "github"}
	sha := strings.Repeat("a", 40)
	gate := func(vc int64, head *string) scangate.GateChange {
		return scangate.GateChange{GateView: scangate.GateView{PRID: 1, HeadSHA: head}, VcID: vc, RepoName: "acme/api", Sequence: 1}
	}
	recs := []events.DynamoDBEventRecord{
		f.event("01G1", scangate.EventGateChanged, gate(7, &sha)), // webhooks 1, 2 and integration 7
		f.event("01G2", scangate.EventGateChanged, gate(7, nil)),  // no commit: webhooks only
		f.event("01G3", scangate.EventGateChanged, gate(8, &sha)), // no integration of vc 8
		f.event("01G4", scangate.EventGateChanged, gate(7, &sha)),
	}
	test := f.event("01T1", scangate.EventWebhookTest, map[string]int{"id": 3})
	e := f.st.events["01T1"]
	e.Webhook = 3
	f.st.events["01T1"] = e
	f.handle(t, append(recs, test)...)

	want := map[deliverylane.Lane][]string{
		deliverylane.Fast: {
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 1}, "01G1"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestIntegration, ID: 7}, "01G1"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 1}, "01G2"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 1}, "01G3"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 1}, "01G4"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestIntegration, ID: 7}, "01G4"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 3}, "01T1"),
		},
		deliverylane.Retry: {
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 2}, "01G1"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 2}, "01G2"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 2}, "01G3"),
			deliverylane.Message(scangate.Destination{Kind: scangate.DestWebhook, ID: 2}, "01G4"),
		},
	}
	for l, msgs := range want {
		got := slices.Sorted(slices.Values(f.q.sent[l]))
		if !slices.Equal(got, slices.Sorted(slices.Values(msgs))) {
			t.Errorf("%s lane: %v\nwant %v", l, got, msgs)
		}
	}
	if f.st.integReads != 2 { // vc 7 and vc 8, once each
		t.Errorf("%d reads of integrations", f.st.integReads)
	}
	for id, e := range f.st.events {
		if !e.Dispatched {
			t.Errorf("event %s not marked dispatched", id)
		}
	}
}

// TestRetriedBatch: a batch run again (the stream retries it from the
// first record not done) puts on the bus and queues only what the first
// run left: an event marked dispatched is skipped; a delivery created but
// never attempted (the run died before queueing it) is queued again, one
// already attempted or finished is not; the response names the first
// record whose deliveries could not be created.
func TestRetriedBatch(t *testing.T) {
	t.Parallel()
	f := newFixture(scangate.Webhook{ID: 1, Active: true, Events: []string{scangate.EventAllowlistCreated}})
	to := scangate.Destination{Kind: scangate.DestWebhook, ID: 1}
	recs := []events.DynamoDBEventRecord{
		f.event("01R1", scangate.EventAllowlistCreated, map[string]int{"id": 1}),
		f.event("01R2", scangate.EventAllowlistCreated, map[string]int{"id": 2}),
		f.event("01R3", scangate.EventAllowlistCreated, map[string]int{"id": 3}),
		f.event("01R4", scangate.EventAllowlistCreated, map[string]int{"id": 4}),
	}
	e := f.st.events["01R1"]
	e.Dispatched = true
	f.st.events["01R1"] = e
	f.st.deliveries[fmt.Sprint(to, "01R2")] = scangate.Delivery{To: to, EventID: "01R2", Status: scangate.DeliveryPending}
	f.st.deliveries[fmt.Sprint(to, "01R3")] = scangate.Delivery{To: to, EventID: "01R3", Status: scangate.DeliveryPending, Attempts: 1}
	f.st.failCreate = "01R4"
	resp := f.handle(t, recs...)
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "seq-01R4" {
		t.Errorf("failures %+v; want the fourth record's", resp.BatchItemFailures)
	}
	if got := f.q.sent[deliverylane.Fast]; !slices.Equal(got, []string{deliverylane.Message(to, "01R2")}) {
		t.Errorf("queued %v; want the delivery never queued alone", got)
	}
	var put []string
	for _, c := range f.bus.calls {
		for _, en := range c {
			var ev struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(en.Detail, &ev)
			put = append(put, ev.ID)
		}
	}
	if !slices.Equal(put, []string{"01R2", "01R3", "01R4"}) {
		t.Errorf("put on the bus %v", put)
	}
	if f.st.events["01R4"].Dispatched || !f.st.events["01R2"].Dispatched || !f.st.events["01R3"].Dispatched {
		t.Errorf("marks %+v", f.st.events)
	}
}
