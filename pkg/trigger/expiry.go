package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// ExpiryStore applies the expiries of allowlists.
type ExpiryStore interface {
	ExpireDue(ctx context.Context, now time.Time) (int, error)
	WarnExpiring(ctx context.Context, now time.Time) (int, error)
}

// Resumer resumes durable work whose lease has run out (work.Runner).
type Resumer interface {
	Resume(ctx context.Context, now time.Time) (int, error)
}

// ExpireAllowlists is the scheduled function, which an EventBridge
// schedule runs every minute:
// every allowlist whose expiry has passed stops suppressing, and what it
// covered is re-evaluated; every allowlist whose expiry is at most 7 days
// away gets its allowlist.expiring event, once; then every piece of
// durable work whose runner stopped (its lease has run out: a request cut
// short, a process that died) is resumed. An error makes Lambda run it
// again; the work is idempotent, and the next minute's run finishes what
// one left.
func ExpireAllowlists(st ExpiryStore, run Resumer, now func() time.Time, log *slog.Logger) ScheduleHandler {
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		start := now()
		expired, err := st.ExpireDue(ctx, start)
		warned := 0
		if err == nil {
			warned, err = st.WarnExpiring(ctx, start)
		}
		// The work resumed stops with time to give its lease up, so that
		// the next run takes it at once rather than after the lease.
		work := ctx
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			work, cancel = context.WithDeadline(ctx, d.Add(-finishMargin))
			defer cancel()
		}
		resumed, rerr := run.Resume(work, now())
		if errors.Is(rerr, context.DeadlineExceeded) && work.Err() != nil && ctx.Err() == nil {
			rerr = nil // out of time: the next run goes on from where this one stopped
		}
		err = errors.Join(err, rerr)
		attrs := []any{"operation", "ExpireAllowlists", "event_id", ev.ID, "expired", expired, "warned", warned, "work_completed", resumed,
			"latency_ms", time.Since(start).Milliseconds()}
		if err != nil {
			log.ErrorContext(ctx, "scheduled function", append(attrs, "error", err.Error())...)
			return fmt.Errorf("scheduled function: %w", err)
		}
		log.InfoContext(ctx, "scheduled function", attrs...)
		return nil
	}
}
