package local

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scangate/scangate/pkg/delivery"
	"github.com/scangate/scangate/pkg/egress"
	"github.com/scangate/scangate/pkg/lane"
	"github.com/scangate/scangate/pkg/seal"
)

// The queues of template.yaml that carry deliveries, by lane.
var laneQueues = map[lane.Lane]string{
	lane.Fast:  "DeliveryQueue",
	lane.Retry: "DeliveryRetryQueue",
	lane.Dead:  "DeliveryDeadLetterQueue",
}

// Lanes are the delivery queues as the local stack runs them (lane.Queues):
// the template's queues, or queues that keep what they are sent (NewLanes).
type Lanes struct {
	queues map[lane.Lane]*Queue
}

// NewLanes returns lanes of queues that no function consumes: they keep
// what they are sent (test harnesses).
func NewLanes() *Lanes {
	l := &Lanes{queues: map[lane.Lane]*Queue{}}
	for ln, id := range laneQueues {
		l.queues[ln] = newQueue(id)
	}
	return l
}

// Queue is the queue of a lane.
func (l *Lanes) Queue(ln lane.Lane) *Queue { return l.queues[ln] }

func (l *Lanes) queue(ln lane.Lane) (*Queue, error) {
	q := l.queues[ln]
	if q == nil {
		return nil, fmt.Errorf("no queue for the %s lane", ln)
	}
	return q, nil
}

// Send sends a message to a lane's queue, visible after delay.
func (l *Lanes) Send(_ context.Context, ln lane.Lane, body string, delay time.Duration) error {
	q, err := l.queue(ln)
	if err != nil {
		return err
	}
	q.SendDelayed(body, min(delay, lane.MaxDelay))
	return nil
}

// Hide hides a message in flight until d from now.
func (l *Lanes) Hide(_ context.Context, ln lane.Lane, receipt string, d time.Duration) error {
	q, err := l.queue(ln)
	if err != nil {
		return err
	}
	return q.Hide(receipt, min(d, lane.MaxHide))
}

// LaneOf names the lane of a queue by its ARN, whose last part is the
// queue's name (its logical id, locally).
func (l *Lanes) LaneOf(arn string) (lane.Lane, bool) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	for ln, q := range l.queues {
		if q.Name == name {
			return ln, true
		}
	}
	return "", false
}

// Bus is the stack's event bus as the local stack records it: what the
// dispatcher put, in order.
type Bus struct {
	mu      sync.Mutex
	entries []delivery.Entry
}

// Put records entries.
func (b *Bus) Put(_ context.Context, entries []delivery.Entry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entries = append(b.entries, entries...)
	return nil
}

// Entries returns what was put on the bus.
func (b *Bus) Entries() []delivery.Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]delivery.Entry(nil), b.entries...)
}

// EventDeps are the dependencies of the event functions (part of
// ops.Deps) for test harnesses that run handlers outside a stack: lanes
// that keep what they are sent, a recorded bus, a box with a fixed key,
// http to loopback allowed, the real clock. Embed it.
type EventDeps struct {
	lanes *Lanes
	bus   *Bus
	box   *seal.Box
}

// NewEventDeps returns the event dependencies of a harness.
func NewEventDeps() EventDeps {
	box, err := seal.New([]byte("a secrets key for test harnesses, 32 bytes or more"))
	if err != nil {
		panic(err) // a constant key of the right length
	}
	return EventDeps{lanes: NewLanes(), bus: &Bus{}, box: box}
}

func (e EventDeps) Queues() lane.Queues   { return e.lanes }
func (e EventDeps) Bus() delivery.Bus     { return e.bus }
func (e EventDeps) Box() *seal.Box        { return e.box }
func (e EventDeps) Egress() egress.Policy { return egress.Policy{LoopbackHTTP: true} }
func (e EventDeps) Now() func() time.Time { return time.Now }
