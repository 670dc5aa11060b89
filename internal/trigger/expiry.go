package trigger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/queue/work"
)

// ExpiryStore applies the expiries of allowlists, each with its work.
type ExpiryStore interface {
	ExpireDue(ctx context.Context, now time.Time, lease int64) ([]work.Item, error)
	WarnExpiring(ctx context.Context, now time.Time) (int, error)
}

// Resumer runs durable work (work.Runner): the work of the expiries it
// applies, then the work whose lease has run out.
type Resumer interface {
	LeaseFrom(now time.Time) int64
	Continue(ctx context.Context, it work.Item) (work.Item, error)
	Resume(ctx context.Context, now time.Time) (int, error)
}

// ExpireAllowlists is the scheduled function, which an EventBridge
// schedule runs every minute: every allowlist whose expiry has passed
// stops suppressing, with the work that re-evaluates what it covered,
// which runs at once (or is dispatched to the work queue when large);
// every allowlist whose expiry is at most 7 days away gets its
// allowlist.expiring event, once; then every piece of durable work whose
// lease has run out (a request cut short, a process that died, a
// dispatched item whose steps stopped progressing) is resumed. An error
// makes Lambda run it again; the work is idempotent, and the next
// minute's run finishes what one left.
func ExpireAllowlists(st ExpiryStore, run Resumer, now func() time.Time, log *slog.Logger) ScheduleHandler {
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		start := now()
		// The work stops with time to give its lease up, so that the next
		// run takes it at once rather than after the lease.
		budget := ctx
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			budget, cancel = context.WithDeadline(ctx, d.Add(-finishMargin))
			defer cancel()
		}
		items, err := st.ExpireDue(ctx, start, run.LeaseFrom(start))
		warned := 0
		if err == nil {
			warned, err = st.WarnExpiring(ctx, start)
		}
		var errs []error
		for _, it := range items {
			if _, err := run.Continue(budget, it); err != nil {
				errs = append(errs, err)
			}
		}
		resumed, rerr := run.Resume(budget, now())
		rerr = errors.Join(append(errs, rerr)...)
		if errors.Is(rerr, context.DeadlineExceeded) && budget.Err() != nil && ctx.Err() == nil {
			rerr = nil // out of time: the next run goes on from where this one stopped
		}
		err = errors.Join(err, rerr)
		attrs := []any{"operation", "ExpireAllowlists", "event_id", ev.ID, "expired", len(items), "warned", warned, "work_completed", resumed,
			"latency_ms", time.Since(start).Milliseconds()}
		if err != nil {
			log.ErrorContext(ctx, "scheduled function", append(attrs, "error", err.Error())...)
			return fmt.Errorf("scheduled function: %w", err)
		}
		log.InfoContext(ctx, "scheduled function", attrs...)
		return nil
	}
}

// WorkHandler handles one message of the work queue (work.Runner.Handle).
type WorkHandler interface {
	Handle(ctx context.Context, body string) error
}

// RunWork is the queue function of durable work: each message names a
// step of a dispatched item (or an item to plan and dispatch), which it
// runs unless it is done, completing the item after its last step. A
// message it could not handle is named in the partial batch response and
// delivered again (a step is idempotent); after the queue's
// maxReceiveCount it goes to the dead-letter queue, whose alarm fires, and
// the scheduled function dispatches the step again once the item's lease
// runs out.
func RunWork(run WorkHandler, log *slog.Logger) QueueHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			start := time.Now()
			err := run.Handle(ctx, m.Body)
			attrs := []any{"operation", "RunWork", "message_id", m.MessageId, "body", m.Body, "latency_ms", time.Since(start).Milliseconds()}
			if err != nil {
				log.ErrorContext(ctx, "work step failed: delivered again", append(attrs, "error", err.Error())...)
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			log.InfoContext(ctx, "work step", attrs...)
		}
		return resp, nil
	}
}
