// Package dispatch is the dispatcher: invoked by the table's stream,
// filtered to event items (the outbox), it puts each event on the event
// bus and creates one delivery per destination — each active webhook that
// takes its type, and for a pr.gate_changed with a commit the integration
// of the PR's vc_id — and queues it for the deliverer (internal/events/delivery).
package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// Entry is one event as it is put on the event bus: source scangate,
// detail-type its type, detail its body.
type Entry struct {
	Type   string
	Time   time.Time
	Detail []byte
}

// Bus is the stack's event bus: EventBridge on AWS (internal/events/bus), a recorded
// bus locally. Put puts every entry or returns an error.
type Bus interface {
	Put(ctx context.Context, entries []Entry) error
}

// Source is the source of the events scangate puts on the bus.
const Source = "scangate"

// Store is what the dispatcher reads and writes.
type Store interface {
	Events(ctx context.Context, ids []string) ([]store.StoredEvent, error)
	MarkDispatched(ctx context.Context, id string) error
	Webhooks(ctx context.Context) ([]scangate.Webhook, error)
	Integration(ctx context.Context, vcID int64) (scangate.Integration, error)
	CreateDelivery(ctx context.Context, d scangate.Delivery) (scangate.Delivery, bool, error)
}

// BusBatch is how many events one PutEvents takes; busBytes bounds the
// details of one call (EventBridge takes 256 KiB a call). Chunk is how
// many records are read at once (one BatchGetItem), and Parallel how many
// of their events are dispatched at once.
const (
	BusBatch = 10
	busBytes = 200 << 10
	Chunk    = 50
	Parallel = 16
)

// Dispatcher handles the stream's batches of event items.
type Dispatcher struct {
	Store  Store
	Bus    Bus
	Queues deliverylane.Queues
	Now    func() time.Time
	Log    *slog.Logger
}

// NewDispatcher returns the dispatcher's stream handler (a
// trigger.StreamHandler).
func NewDispatcher(st Store, bus Bus, q deliverylane.Queues, now func() time.Time, log *slog.Logger) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return Dispatcher{Store: st, Bus: bus, Queues: q, Now: now, Log: log}.Handle
}

// Handle dispatches a batch, Chunk records at a time: it reads their
// events (a retried batch finds those it finished marked dispatched and
// skips them), puts the unfinished ones on the bus, then for each, up to
// Parallel at once, creates its deliveries (conditional puts: a delivery
// is created once), queues them and marks the event dispatched. When some
// fail it names the first that failed, so that the stream starts the next
// batch there: every event before it is done; it and those after are done
// again unless marked (an event after it that finished is skipped).
func (d Dispatcher) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	run := &dispatch{Dispatcher: d, integrations: map[int64]*integrationRead{}}
	for start := 0; start < len(ev.Records); start += Chunk {
		part := ev.Records[start:min(start+Chunk, len(ev.Records))]
		if i, err := run.chunk(ctx, part); err != nil {
			d.Log.ErrorContext(ctx, "dispatch failed; the stream retries from this record", "sequence",
				part[i].Change.SequenceNumber, "error", err.Error())
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
				{ItemIdentifier: part[i].Change.SequenceNumber}}}, nil
		}
	}
	return events.DynamoDBEventResponse{}, nil
}

// dispatch is one invocation's work: the subscriptions, read once, and the
// integrations, read once each.
type dispatch struct {
	Dispatcher
	webhooks     []scangate.Webhook
	read         bool
	mu           sync.Mutex // guards integrations
	integrations map[int64]*integrationRead
}

// integrationRead is the one read of a vc_id's integration in an
// invocation: the events dispatched at once that name it wait for it.
type integrationRead struct {
	once sync.Once
	in   *scangate.Integration // nil: none
	err  error
}

// chunk dispatches records; on failure it returns the index of the first
// record not done.
func (r *dispatch) chunk(ctx context.Context, recs []events.DynamoDBEventRecord) (int, error) {
	ids := make([]string, 0, len(recs))
	for _, rec := range recs {
		if id, ok := store.EventID(rec.Change.Keys["PK"].String()); ok {
			ids = append(ids, id)
		}
	}
	stored, err := r.Store.Events(ctx, ids)
	if err != nil {
		return 0, err
	}
	byID := map[string]store.StoredEvent{}
	var todo []scangate.Event
	for _, e := range stored {
		byID[e.ID] = e
		if !e.Dispatched {
			todo = append(todo, e.Event)
		}
	}
	if len(todo) == 0 {
		return 0, nil
	}
	if err := r.subscriptions(ctx); err != nil {
		return 0, err
	}
	if err := r.put(ctx, todo); err != nil {
		return 0, err
	}
	errs := make([]error, len(recs))
	slots := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for i, rec := range recs {
		id, _ := store.EventID(rec.Change.Keys["PK"].String())
		e, ok := byID[id]
		if !ok || e.Dispatched { // expired, or done by an earlier run
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = r.one(ctx, e.Event)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return 0, nil
}

// one creates, queues and marks done the deliveries of one event.
func (r *dispatch) one(ctx context.Context, e scangate.Event) error {
	if err := r.deliveries(ctx, e); err != nil {
		return fmt.Errorf("event %s: %w", e.ID, err)
	}
	return r.Store.MarkDispatched(ctx, e.ID)
}

// subscriptions reads the subscriptions once an invocation.
func (r *dispatch) subscriptions(ctx context.Context) error {
	if r.read {
		return nil
	}
	ws, err := r.Store.Webhooks(ctx)
	if err != nil {
		return err
	}
	r.webhooks, r.read = ws, true
	return nil
}

// put puts events on the bus, BusBatch a call or as few as their sizes
// allow.
func (r *dispatch) put(ctx context.Context, evs []scangate.Event) error {
	var batch []Entry
	size := 0
	for _, e := range evs {
		body, err := webhook.Event{ID: e.ID, Type: e.Type, OccurredAt: e.OccurredAt, Data: e.Data}.Body()
		if err != nil {
			return err
		}
		if len(batch) == BusBatch || len(batch) > 0 && size+len(body) > busBytes {
			if err := r.Bus.Put(ctx, batch); err != nil {
				return err
			}
			batch, size = nil, 0
		}
		batch = append(batch, Entry{Type: e.Type, Time: e.OccurredAt.Time, Detail: body})
		size += len(body)
	}
	if len(batch) == 0 {
		return nil
	}
	return r.Bus.Put(ctx, batch)
}

// deliveries creates and queues the deliveries of an event.
func (r *dispatch) deliveries(ctx context.Context, e scangate.Event) error {
	dests, err := r.destinations(ctx, e)
	if err != nil {
		return err
	}
	for _, dest := range dests {
		d, created, err := r.Store.CreateDelivery(ctx, scangate.Delivery{To: dest.to, EventID: e.ID, EventType: e.Type,
			Status: scangate.DeliveryPending, CreatedAt: scangate.At(r.Now())})
		if err != nil {
			return err
		}
		// A delivery created by an earlier run that stopped before it was
		// queued is queued now (a second message for it is harmless: an
		// attempt is recorded once).
		if !created && (d.Status != scangate.DeliveryPending || d.Attempts > 0) {
			continue
		}
		if err := r.Queues.Send(ctx, dest.lane, deliverylane.Message(dest.to, e.ID), 0); err != nil {
			return fmt.Errorf("queue delivery to %s %d: %w", dest.to.Kind, dest.to.ID, err)
		}
	}
	return nil
}

type destination struct {
	to   scangate.Destination
	lane deliverylane.Lane
}

// destinations are where an event goes: each active subscription that
// takes its type (webhook.test: its one subscription, active or not), in
// the retry lane when it is failing; and the integration of a gate
// change's vc_id when the gate names a commit.
func (r *dispatch) destinations(ctx context.Context, e scangate.Event) ([]destination, error) {
	var out []destination
	for _, w := range r.webhooks {
		if e.Webhook != 0 && w.ID != e.Webhook || e.Webhook == 0 && (!w.Active || !w.Wants(e.Type)) {
			continue
		}
		to := deliverylane.Fast
		if w.FailingSince != nil {
			to = deliverylane.Retry
		}
		out = append(out, destination{scangate.Destination{Kind: scangate.DestWebhook, ID: w.ID}, to})
	}
	if e.Type != scangate.EventGateChanged {
		return out, nil
	}
	var g scangate.GateChange
	if err := json.Unmarshal(e.Data, &g); err != nil || g.HeadSHA == nil || *g.HeadSHA == "" || g.VcID == 0 {
		return out, nil // no commit to report to
	}
	in, err := r.integration(ctx, g.VcID)
	if err != nil || in == nil {
		return out, err
	}
	return append(out, destination{scangate.Destination{Kind: scangate.DestIntegration, ID: g.VcID}, deliverylane.Fast}), nil
}

func (r *dispatch) integration(ctx context.Context, vcID int64) (*scangate.Integration, error) {
	r.mu.Lock()
	read, ok := r.integrations[vcID]
	if !ok {
		read = &integrationRead{}
		r.integrations[vcID] = read
	}
	r.mu.Unlock()
	read.once.Do(func() {
		got, err := r.Store.Integration(ctx, vcID)
		switch {
		case scangate.KindOf(err) == scangate.KindNotFound:
		case err != nil:
			read.err = err
		default:
			read.in = &got
		}
	})
	return read.in, read.err
}
