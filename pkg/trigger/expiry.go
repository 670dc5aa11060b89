package trigger

import (
	"context"
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

// ExpireAllowlists is the function an EventBridge schedule runs every
// minute: every allowlist whose expiry has passed stops suppressing, and
// what it covered is re-evaluated; every allowlist whose expiry is at most
// 7 days away gets its allowlist.expiring event, once. An error makes
// Lambda run it again; the work is idempotent, and the next minute's run
// finishes what one left.
func ExpireAllowlists(st ExpiryStore, now func() time.Time, log *slog.Logger) ScheduleHandler {
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		start := now()
		n, err := st.ExpireDue(ctx, start)
		warned := 0
		if err == nil {
			warned, err = st.WarnExpiring(ctx, start)
		}
		attrs := []any{"operation", "ExpireAllowlists", "event_id", ev.ID, "expired", n, "warned", warned,
			"latency_ms", time.Since(start).Milliseconds()}
		if err != nil {
			log.ErrorContext(ctx, "expire allowlists", append(attrs, "error", err.Error())...)
			return fmt.Errorf("expire allowlists: %w", err)
		}
		log.InfoContext(ctx, "expire allowlists", attrs...)
		return nil
	}
}
