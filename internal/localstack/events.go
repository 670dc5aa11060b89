package localstack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/seal"
)

// The queues of template.yaml that carry deliveries, by lane.
var laneQueues = map[deliverylane.Lane]string{
	deliverylane.Fast:  "DeliveryQueue",
	deliverylane.Retry: "DeliveryRetryQueue",
	deliverylane.Dead:  "DeliveryDeadLetterQueue",
}

// Lanes are the delivery queues as the local stack runs them (lane.Queues):
// the template's queues, or queues that keep what they are sent (NewLanes).
type Lanes struct {
	queues map[deliverylane.Lane]*Queue
}

// NewLanes returns lanes of queues that no function consumes: they keep
// what they are sent (test harnesses).
func NewLanes() *Lanes {
	l := &Lanes{queues: map[deliverylane.Lane]*Queue{}}
	for ln, id := range laneQueues {
		l.queues[ln] = newQueue(id)
	}
	return l
}

// Queue is the queue of a lane.
func (l *Lanes) Queue(ln deliverylane.Lane) *Queue { return l.queues[ln] }

func (l *Lanes) queue(ln deliverylane.Lane) (*Queue, error) {
	q := l.queues[ln]
	if q == nil {
		return nil, fmt.Errorf("no queue for the %s lane", ln)
	}
	return q, nil
}

// Send sends a message to a lane's queue, visible after delay.
func (l *Lanes) Send(_ context.Context, ln deliverylane.Lane, body string, delay time.Duration) error {
	q, err := l.queue(ln)
	if err != nil {
		return err
	}
	q.SendDelayed(body, min(delay, deliverylane.MaxDelay))
	return nil
}

// Hide hides a message in flight until d from now.
func (l *Lanes) Hide(_ context.Context, ln deliverylane.Lane, receipt string, d time.Duration) error {
	q, err := l.queue(ln)
	if err != nil {
		return err
	}
	return q.Hide(receipt, min(d, deliverylane.MaxHide))
}

// LaneOf names the lane of a queue by its ARN, whose last part is the
// queue's name (its logical id, locally).
func (l *Lanes) LaneOf(arn string) (deliverylane.Lane, bool) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	for ln, q := range l.queues {
		if q.Name == name {
			return ln, true
		}
	}
	return "", false
}

// busResource is the logical id of the event bus in template.yaml.
const busResource = "EventBus"

// observedLanes are a function's view of the lanes that tells observe the
// IAM action each call needs on its queue (sqs:SendMessage@<queue>).
type observedLanes struct {
	*Lanes
	fn      string
	observe func(function, action string)
}

func (o observedLanes) Send(ctx context.Context, ln deliverylane.Lane, body string, delay time.Duration) error {
	if q := o.queues[ln]; q != nil {
		o.observe(o.fn, "sqs:SendMessage@"+q.Name)
	}
	return o.Lanes.Send(ctx, ln, body, delay)
}

func (o observedLanes) Hide(ctx context.Context, ln deliverylane.Lane, receipt string, d time.Duration) error {
	if q := o.queues[ln]; q != nil {
		o.observe(o.fn, "sqs:ChangeMessageVisibility@"+q.Name)
	}
	return o.Lanes.Hide(ctx, ln, receipt, d)
}

// observedBus is a function's view of the bus that tells observe of each
// PutEvents.
type observedBus struct {
	*Bus
	fn      string
	observe func(function, action string)
}

func (o observedBus) Put(ctx context.Context, entries []dispatch.Entry) error {
	o.observe(o.fn, "events:PutEvents@"+busResource)
	return o.Bus.Put(ctx, entries)
}

// Bus is the stack's event bus as the local stack records it: what the
// dispatcher put, in order.
type Bus struct {
	mu      sync.Mutex
	entries []dispatch.Entry
}

// Put records entries.
func (b *Bus) Put(_ context.Context, entries []dispatch.Entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries = append(b.entries, entries...)
	return nil
}

// Entries returns what was put on the bus.
func (b *Bus) Entries() []dispatch.Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]dispatch.Entry(nil), b.entries...)
}

// EventDeps are the dependencies of the event functions (part of
// ops.Deps) for test harnesses that run handlers outside a stack: lanes
// that keep what they are sent, a recorded bus, a box with a fixed key,
// http to loopback allowed. Embed it.
type EventDeps struct {
	lanes *Lanes
	bus   *Bus
	box   *seal.Box
}

// HarnessSecretsKey is the secrets key of EventDeps' box.
const HarnessSecretsKey = "a secrets key for test harnesses, 32 bytes or more"

// NewEventDeps returns the event dependencies of a harness.
func NewEventDeps() EventDeps {
	box, err := seal.New([]byte(HarnessSecretsKey))
	if err != nil {
		panic(err) // a constant key of the right length
	}
	return EventDeps{lanes: NewLanes(), bus: &Bus{}, box: box}
}

func (e EventDeps) Queues() deliverylane.Queues { return e.lanes }
func (e EventDeps) Bus() dispatch.Bus           { return e.bus }
func (e EventDeps) Box() *seal.Box              { return e.box }
func (e EventDeps) Egress() egress.Policy       { return egress.Policy{LoopbackHTTP: true} }

// Settled waits until every stream has delivered what it holds and no
// consumed queue has a message in flight or visible (messages delayed or
// hidden until later may wait), or ctx ends.
func (s *Stack) Settled(ctx context.Context) error {
	for {
		for _, st := range s.streams {
			if err := st.Idle(ctx); err != nil {
				return err
			}
		}
		for _, q := range s.queues {
			if q.consumer == nil {
				continue
			}
			if err := q.Settled(ctx); err != nil {
				return err
			}
		}
		if s.quiet() {
			return nil
		}
	}
}

// quiet reports whether nothing is in flight or due now, at this moment.
func (s *Stack) quiet() bool {
	for _, st := range s.streams {
		st.mu.Lock()
		busy := len(st.records) > 0 || st.busy
		st.mu.Unlock()
		if busy {
			return false
		}
	}
	for _, q := range s.queues {
		q.mu.Lock()
		busy := q.consumer != nil && (q.pending > 0 || q.visible() > 0)
		q.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}
