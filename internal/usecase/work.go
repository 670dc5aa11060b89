package usecase

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// WorkRunner runs the work a change leaves (work.Runner).
type WorkRunner interface {
	LeaseFrom(now time.Time) int64
	Continue(ctx context.Context, it work.Item) (work.Item, error)
}

// WorkBudget is how long a change's request runs its work before
// answering (API Gateway gives a request 29 s); what is left is resumed
// by the scheduled function, or runs in the queue function.
const WorkBudget = 20 * time.Second

// RunWork runs the work a change wrote, as long as the request may (until
// WorkBudget after at, and 5 s before the request's deadline): small work
// completes; large work is dispatched to the queue; work cut short, or
// failing, is given up to the scheduled function (and the error logged).
// It returns the item as it stands.
func RunWork(ctx context.Context, run WorkRunner, it work.Item, at time.Time, log *slog.Logger) work.Item {
	end := at.Add(WorkBudget)
	if d, ok := ctx.Deadline(); ok && d.Add(-5*time.Second).Before(end) {
		end = d.Add(-5 * time.Second)
	}
	budget, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	it, err := run.Continue(budget, it)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.ErrorContext(ctx, "durable work: left to the scheduled function", "work_id", it.ID, "kind", it.Kind, "error", err.Error())
	}
	return it
}

// ExpiryStore applies the expiries of allowlists, each with its work.
type ExpiryStore interface {
	ExpireDue(ctx context.Context, now time.Time, lease int64) ([]work.Item, error)
	WarnExpiring(ctx context.Context, now time.Time) (int, error)
}

// Resumer runs durable work (work.Runner): the work of the expiries it
// applies, then the work whose lease has run out.
type Resumer interface {
	WorkRunner
	Resume(ctx context.Context, now time.Time) (int, error)
}

// Expired is what one run of Expire did.
type Expired struct {
	Expired, Warned, Resumed int
}

// Expire is one run of the scheduled work: every allowlist whose expiry
// has passed (as of now) stops suppressing, with the work that
// re-evaluates what it covered, run at once (or dispatched to the work
// queue when large); every allowlist whose expiry is at most 7 days away
// gets its allowlist.expiring event, once; then every piece of durable
// work whose lease has run out is resumed. The work runs until budget
// ends: work that budget cuts short is no error (the next run goes on
// from where this one stopped), while ctx's end is.
func Expire(ctx, budget context.Context, st ExpiryStore, run Resumer, now func() time.Time) (Expired, error) {
	start := now()
	items, err := st.ExpireDue(ctx, start, run.LeaseFrom(start))
	out := Expired{Expired: len(items)}
	if err == nil {
		out.Warned, err = st.WarnExpiring(ctx, start)
	}
	var errs []error
	for _, it := range items {
		if _, err := run.Continue(budget, it); err != nil {
			errs = append(errs, err)
		}
	}
	var rerr error
	out.Resumed, rerr = run.Resume(budget, now())
	rerr = errors.Join(append(errs, rerr)...)
	if errors.Is(rerr, context.DeadlineExceeded) && budget.Err() != nil && ctx.Err() == nil {
		rerr = nil
	}
	return out, errors.Join(err, rerr)
}

// WorkStore keeps durable work (work.Store) and builds the kinds of it
// that scangate runs (the store's PolicyWork and ReevalWork).
type WorkStore interface {
	work.Store
	WorkLease() time.Duration
	PolicyWork(now func() time.Time) work.Kind
	ReevalWork(now func() time.Time, cause string) work.Kind
	BaselineWork(now func() time.Time) work.Kind
}

// Runner is the runner of scangate's kinds of durable work, the registry
// every function that starts or runs work builds: re-judging every pull
// request after a policy change, re-evaluating an allowlist's findings
// after a change or an expiry. With send, the steps of work planned to
// fan out are dispatched to the work queue.
func Runner(st WorkStore, now func() time.Time, send work.Sender) work.Runner {
	return work.Runner{Store: st, Now: now, Sender: send, Lease: st.WorkLease(), DispatchLease: st.WorkLease(),
		Kinds: map[string]work.Kind{
			scangate.WorkPolicy:    st.PolicyWork(now),
			scangate.WorkAllowlist: st.ReevalWork(now, scangate.CauseAllowlist),
			scangate.WorkExpiry:    st.ReevalWork(now, scangate.CauseExpiry),
			scangate.WorkBaseline:  st.BaselineWork(now),
		}}
}
