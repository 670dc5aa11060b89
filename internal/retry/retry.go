// Package retry is the one policy by which scangate repeats work that lost
// a race: a transaction cancelled by a conflict or a stale condition, a
// batch with unprocessed items, a re-evaluation superseded by a newer
// allowlist version. It backs off exponentially with full jitter, gives up
// after a bounded number of attempts, and keeps the kind of the error it
// gives up with: contention and deadlines make the service unavailable for
// a moment (503 with Retry-After); a caller that went away is reported as
// such.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// Policy bounds and paces the attempts of one operation.
type Policy struct {
	Attempts int           // at most this many attempts
	Base     time.Duration // backoff before the second attempt, doubling after
	Max      time.Duration // the backoff never exceeds this
	// NoDelay skips the waits (tests): the attempts are still bounded.
	NoDelay bool
}

// Default is the policy of the deployed service: up to 30 attempts, waits
// drawn from [0, 2 ms·2^n] capped at 100 ms, about 2 s in all at worst, well
// inside API Gateway's 29 s.
var Default = Policy{Attempts: 30, Base: 2 * time.Millisecond, Max: 100 * time.Millisecond}

// Immediate is Default without the waits, for tests.
var Immediate = Policy{Attempts: 30, NoDelay: true}

// ErrExhausted is wrapped by the error of an operation that was still
// contended after its last attempt.
var ErrExhausted = errors.New("still contended")

// Do runs fn until it reports done or fails, waiting between attempts. fn
// returns done=false to ask for another attempt. The error names op.
func (p Policy) Do(ctx context.Context, op string, fn func(attempt int) (done bool, err error)) error {
	attempts := max(p.Attempts, 1)
	for attempt := 0; attempt < attempts; attempt++ {
		done, err := fn(attempt)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if attempt == attempts-1 {
			break
		}
		if err := p.wait(ctx, attempt); err != nil {
			return Context(op, err)
		}
	}
	return scangate.Unavailable(fmt.Errorf("%s: %w after %d attempts", op, ErrExhausted, attempts))
}

// wait sleeps the jittered backoff of an attempt, or until ctx ends.
func (p Policy) wait(ctx context.Context, attempt int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.NoDelay || p.Base <= 0 {
		return nil
	}
	ceiling := min(p.Base<<min(attempt, 30), max(p.Max, p.Base))
	t := time.NewTimer(time.Duration(rand.Int64N(int64(ceiling) + 1)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Context classifies an error that came from a context ending: a deadline
// (Lambda's, or API Gateway's 29 s) makes the service unavailable (503), a
// cancellation means the caller went away. Other errors are returned as
// they are.
func Context(op string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return scangate.Unavailable(fmt.Errorf("%s: %w", op, err))
	case errors.Is(err, context.Canceled):
		return scangate.Gone(fmt.Errorf("%s: %w", op, err))
	}
	return err
}
