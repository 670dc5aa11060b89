package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/delivery"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// The deliverer's decisions that the end-to-end tests (internal/localstack) do not
// reach: messages that name no delivery, deliveries that are gone, done,
// expired or not yet due, a destination removed, a gate change without a
// commit, a commit another post holds, and an attempt another copy of the
// message recorded first.

// fakeStore is the deliverer's store: one delivery's work, and what was
// recorded.
type fakeStore struct {
	mu       sync.Mutex
	work     store.Work
	workErr  error
	recorded []scangate.Delivery
	stale    bool   // RecordAttempt finds the attempt recorded already
	claim    string // what ClaimStatus answers
	claims   int
}

func (s *fakeStore) DeliveryWork(context.Context, scangate.Destination, string) (store.Work, error) {
	return s.work, s.workErr
}

func (s *fakeStore) RecordAttempt(_ context.Context, d scangate.Delivery, _ int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = append(s.recorded, d)
	return !s.stale, nil
}

func (s *fakeStore) WebhookFailing(context.Context, int64, time.Time) error { return nil }
func (s *fakeStore) WebhookDelivered(context.Context, int64) error          { return nil }
func (s *fakeStore) DisableWebhook(context.Context, int64, string, time.Time) (bool, error) {
	return false, errors.New("not expected")
}

func (s *fakeStore) ClaimStatus(context.Context, int64, int64, string, int64, time.Time, int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims++
	return s.claim, nil
}
func (s *fakeStore) ReleaseStatus(context.Context, int64, int64, string, int64, int64) error {
	return nil
}
func (s *fakeStore) CheckRun(context.Context, int64, int64, string) (int64, int64, error) {
	return 0, 0, errors.New("not expected")
}
func (s *fakeStore) SetCheckRun(context.Context, int64, int64, string, int64, int64, int64) error {
	return errors.New("not expected")
}

// call is one thing the deliverer asked of the queues.
type call struct {
	op   string // send or hide
	lane deliverylane.Lane
	body string
	d    time.Duration
}

type fakeQueues struct {
	mu    sync.Mutex
	calls []call
}

func (q *fakeQueues) Send(_ context.Context, l deliverylane.Lane, body string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls = append(q.calls, call{"send", l, body, d})
	return nil
}

func (q *fakeQueues) Hide(_ context.Context, l deliverylane.Lane, _ string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls = append(q.calls, call{"hide", l, "", d})
	return nil
}

func (q *fakeQueues) LaneOf(arn string) (deliverylane.Lane, bool) {
	l, ok := strings.CutPrefix(arn, "arn:")
	return deliverylane.Lane(l), ok
}

type openAll struct{}

func (openAll) Open(_, sealed string) (string, error) { return "plain-" + sealed, nil }

var now = time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)

func deliverer(st *fakeStore, q *fakeQueues) *delivery.Deliverer {
	rules := egress.Policy{LoopbackHTTP: true}
	return &delivery.Deliverer{Store: st, Queues: q, Box: openAll{}, Statuses: rules, StatusHTTP: rules.Client(time.Second),
		Backoff: func(int) (time.Duration, bool) { return time.Minute, true }, Now: func() time.Time { return now },
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
}

// handle hands the deliverer one message of a lane and returns whether
// it is to be received again.
func handle(t *testing.T, d *delivery.Deliverer, l deliverylane.Lane, body string) bool {
	t.Helper()
	resp, err := d.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", ReceiptHandle: "r1",
		Body: body, EventSourceARN: "arn:" + string(l)}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.BatchItemFailures) == 1 && resp.BatchItemFailures[0].ItemIdentifier == "m1"
}

var (
	toHook  = scangate.Destination{Kind: scangate.DestWebhook, ID: 4}
	toInteg = scangate.Destination{Kind: scangate.DestIntegration, ID: 9}
)

func pending(to scangate.Destination) *scangate.Delivery {
	return &scangate.Delivery{To: to, EventID: "01E", EventType: scangate.EventGateChanged, Status: scangate.DeliveryPending}
}

func gateEvent(t *testing.T, head string, seq int64) *scangate.Event {
	t.Helper()
	data := scangate.GateChange{GateView: scangate.GateView{PRID: 1, Blocked: true, Reasons: []scangate.GateReason{}, Categories: []scangate.GateCategoryView{}},
		VcID: 9, RepoID: 5, RepoName: "acme/api", Sequence: seq}
	if head != "" {
		data.HeadSHA = &head
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return &scangate.Event{ID: "01E", Type: scangate.EventGateChanged, OccurredAt: scangate.At(now), Data: b}
}

// TestMessagesWithoutAnAttempt: what the deliverer does with a message
// that leads to no attempt, and whether the message comes back.
func TestMessagesWithoutAnAttempt(t *testing.T) {
	t.Parallel()
	sha := strings.Repeat("a", 40)
	integ := &scangate.Integration{VcID: 9, Type: "github", APIURL: "http://127.0.0.1:9", Token: "sealed"}
	hook := &scangate.Webhook{ID: 4, Active: false, Events: []string{scangate.EventGateChanged}}
	failing := &scangate.Webhook{ID: 4, Active: true, Events: []string{scangate.EventGateChanged}, FailingSince: &scangate.Time{Time: now}}
	due := func(d *scangate.Delivery, after time.Duration) *scangate.Delivery {
		d.Due = now.Add(after).UnixMilli()
		return d
	}
	done := pending(toHook)
	done.Status = scangate.DeliveryDelivered
	for _, c := range []struct {
		name    string
		lane    deliverylane.Lane
		body    string
		work    store.Work
		workErr error
		claim   string
		stale   bool
		again   bool     // the message comes back
		calls   []call   // to the queues
		status  string   // the delivery as recorded, "" for nothing recorded
		reason  string   // in the recorded attempt's error
		claims  int      // claims made of the commit
		exclude []string // the recorded error holds none of these
	}{
		{name: "a body that names no delivery is dead-lettered", lane: deliverylane.Fast, body: `{"kind":"pigeon","id":1,"event":"01E"}`,
			calls: []call{{"send", deliverylane.Dead, `{"kind":"pigeon","id":1,"event":"01E"}`, 0}}},
		{name: "a delivery not read comes back", lane: deliverylane.Fast, body: deliverylane.Message(toHook, "01E"), workErr: errors.New("throttled"), again: true},
		{name: "a delivery that does not exist is dropped", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E")},
		{name: "a delivery done is dropped", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"), work: store.Work{Delivery: done}},
		{name: "an event expired fails its delivery", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work: store.Work{Delivery: pending(toHook), Webhook: hook}, status: "failed", reason: "the event expired"},
		{name: "not due in the fast lane: moved to the retry lane, delayed 15 min at most", lane: deliverylane.Fast, body: deliverylane.Message(toHook, "01E"),
			work:  store.Work{Delivery: due(pending(toHook), 3*time.Hour), Event: gateEvent(t, sha, 1), Webhook: hook},
			calls: []call{{"send", deliverylane.Retry, deliverylane.Message(toHook, "01E"), deliverylane.MaxDelay}}},
		{name: "not due in the retry lane: hidden until due", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work:  store.Work{Delivery: due(pending(toHook), 3*time.Hour), Event: gateEvent(t, sha, 1), Webhook: hook},
			again: true, calls: []call{{"hide", deliverylane.Retry, "", 3 * time.Hour}}},
		{name: "due in a moment: hidden a second at least", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work:  store.Work{Delivery: due(pending(toHook), time.Millisecond), Event: gateEvent(t, sha, 1), Webhook: hook},
			again: true, calls: []call{{"hide", deliverylane.Retry, "", time.Second}}},
		{name: "due in days: hidden 12 hours, the most SQS hides", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work:  store.Work{Delivery: due(pending(toHook), 30*time.Hour), Event: gateEvent(t, sha, 1), Webhook: hook},
			again: true, calls: []call{{"hide", deliverylane.Retry, "", deliverylane.MaxHide}}},
		{name: "a webhook deleted cancels", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work: store.Work{Delivery: pending(toHook), Event: gateEvent(t, sha, 1)}, status: "cancelled", reason: "deleted"},
		{name: "a webhook disabled cancels", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work: store.Work{Delivery: pending(toHook), Event: gateEvent(t, sha, 1), Webhook: hook}, status: "cancelled", reason: "disabled"},
		{name: "a failing webhook gets no attempt in the fast lane: moved to the retry lane", lane: deliverylane.Fast, body: deliverylane.Message(toHook, "01E"),
			work:  store.Work{Delivery: pending(toHook), Event: gateEvent(t, sha, 1), Webhook: failing},
			calls: []call{{"send", deliverylane.Retry, deliverylane.Message(toHook, "01E"), 0}}},
		{name: "an integration removed cancels", lane: deliverylane.Fast, body: deliverylane.Message(toInteg, "01E"),
			work: store.Work{Delivery: pending(toInteg), Event: gateEvent(t, sha, 1)}, status: "cancelled", reason: "removed"},
		{name: "a gate change without a sequence fails", lane: deliverylane.Fast, body: deliverylane.Message(toInteg, "01E"),
			work:   store.Work{Delivery: pending(toInteg), Event: gateEvent(t, sha, 0), Integration: integ},
			status: "failed", reason: "no commit to report", exclude: []string{"plain-sealed"}},
		{name: "a gate change without a commit fails", lane: deliverylane.Fast, body: deliverylane.Message(toInteg, "01E"),
			work:   store.Work{Delivery: pending(toInteg), Event: gateEvent(t, "", 3), Integration: integ},
			status: "failed", reason: "no commit to report"},
		{name: "a commit another post holds: no attempt, back in 5 s", lane: deliverylane.Retry, body: deliverylane.Message(toInteg, "01E"),
			work: store.Work{Delivery: pending(toInteg), Event: gateEvent(t, sha, 2), Integration: integ}, claim: store.Busy, claims: 1,
			again: true, calls: []call{{"hide", deliverylane.Retry, "", delivery.BusyWait}}},
		{name: "a newer gate posted: superseded, no attempt", lane: deliverylane.Fast, body: deliverylane.Message(toInteg, "01E"),
			work: store.Work{Delivery: pending(toInteg), Event: gateEvent(t, sha, 2), Integration: integ}, claim: store.Superseded, claims: 1,
			status: "superseded"},
		{name: "the end recorded by another copy first: nothing more", lane: deliverylane.Retry, body: deliverylane.Message(toHook, "01E"),
			work: store.Work{Delivery: pending(toHook), Event: gateEvent(t, sha, 1)}, stale: true, status: "cancelled", reason: "deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeStore{work: c.work, workErr: c.workErr, claim: c.claim, stale: c.stale}
			q := &fakeQueues{}
			if again := handle(t, deliverer(st, q), c.lane, c.body); again != c.again {
				t.Errorf("comes back %v, want %v", again, c.again)
			}
			if !slices.Equal(q.calls, c.calls) {
				t.Errorf("queues %+v, want %+v", q.calls, c.calls)
			}
			if st.claims != c.claims {
				t.Errorf("%d claims, want %d", st.claims, c.claims)
			}
			switch {
			case c.status == "" && len(st.recorded) != 0:
				t.Errorf("recorded %+v", st.recorded)
			case c.status == "":
			case len(st.recorded) != 1 || string(st.recorded[0].Status) != c.status || st.recorded[0].Attempts != 0:
				t.Errorf("recorded %+v, want one %s, no attempt counted", st.recorded, c.status)
			case c.reason != "" && (st.recorded[0].Last == nil || !strings.Contains(st.recorded[0].Last.Error, c.reason)):
				t.Errorf("recorded %+v, want the reason %q", st.recorded[0].Last, c.reason)
			}
			for _, x := range c.exclude {
				for _, d := range st.recorded {
					if d.Last != nil && strings.Contains(d.Last.Error, x) {
						t.Errorf("the recorded error shows %q: %s", x, d.Last.Error)
					}
				}
			}
		})
	}
}
