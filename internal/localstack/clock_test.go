package localstack_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/queue/deliverylane"
)

// aheadClock is the real time plus an offset that tests move forward: the
// event functions and the queues' delays read it, so a retry due in five
// hours comes up when the test moves the clock, and a time never goes
// back behind the real one that the other functions read.
type aheadClock struct {
	mu     sync.Mutex
	offset time.Duration
}

// clockedTokenTTL is the lifetime of the login tokens of a stack whose
// clock tests move: every function reads that clock, the authorizer and
// the writes' token check too, so a token must outlive the moves (drain's
// at most 20 of 11 hours, and the 3 days of a failing receiver).
const clockedTokenTTL = 30 * 24 * time.Hour

func (c *aheadClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *aheadClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// settle waits until the stack has dispatched every event and no delivery
// is in flight or visible (a retry waiting for its time may be).
func settle(t *testing.T, stack *localstack.Stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound on a hang, not a timing
	defer cancel()
	if err := stack.Settled(ctx); err != nil {
		t.Fatal(err)
	}
}

// drain settles the stack, then moves the clock past the waiting retries,
// again, until no delivery waits: every delivery has reached its end.
func drain(t *testing.T, stack *localstack.Stack, clock *aheadClock) {
	t.Helper()
	for range 20 { // 8 attempts at most, each wait within 11 hours
		settle(t, stack)
		if stack.Lanes().Queue(deliverylane.Fast).Waiting()+stack.Lanes().Queue(deliverylane.Retry).Waiting() == 0 {
			return
		}
		clock.Advance(11 * time.Hour)
	}
	t.Fatal("deliveries still wait after 20 moves of the clock")
}
