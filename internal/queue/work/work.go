// Package work runs durable background work: a change that leaves work to
// do (re-judging every pull request's gate after a policy change, later
// re-evaluating an allowlist's findings or applying an expiry) writes a
// work item in its own transaction, so that no crash, timeout or lost
// request can leave that work undone. A runner holds the item under a
// lease, plans its steps once, runs each step not done yet and keeps its
// result in a marker written once, and completes the item with the sum of
// the results. A runner that stops (its context ends, its process dies)
// leaves the item running; once its lease has run out, the scheduled
// function resumes it (Resume), and the steps already done are not run
// again.
//
// A kind's steps must be idempotent: a step may run more than once (a
// runner that died after the step's writes but before its marker, two
// runners at once after a lease ran out, a queue message delivered
// twice), and every run leaves the same state. A runner runs the steps
// of a small item one after another in its own process; a large one (its
// plan says FanOut) is dispatched: one queue message a step not done,
// each handled by Handle (Step, then Complete) in a queue function, with
// the item's lease moved forward by every step, so that the scheduled
// function dispatches again only the steps of an item that stopped
// progressing (docs/DECISIONS.md, "Durable work").
package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// The statuses of an item.
const (
	Running  = "running"
	Complete = "complete"
)

// Result is what a step did, as counts by name ("prs", "changed"); an
// item's totals are the sums of its steps' results.
type Result map[string]int64

// Add adds o to r.
func (r Result) Add(o Result) {
	for k, v := range o {
		r[k] += v
	}
}

// Item is one piece of durable work.
type Item struct {
	ID     int64
	Kind   string          // names the Kind that runs it
	Params json.RawMessage // the kind's parameters, set by the change that wrote it
	// Steps is the number of steps, -1 until the item is planned.
	Steps int
	// Planned is what planning found (the kind's totals to come, such as
	// how many pull requests it will re-judge).
	Planned Result
	// Layout is the kind's own plan (what each step covers), kept with
	// the item once planned.
	Layout json.RawMessage
	// FanOut: the steps are dispatched to a queue, once planned.
	FanOut      bool
	Status      string
	Lease       int64 // epoch ms until which a runner holds the item; 0 for none
	CreatedAt   time.Time
	CompletedAt time.Time // zero while running
	Totals      Result    // the sum of the steps' results, once complete
}

// Plan is what planning an item decides.
type Plan struct {
	Steps   int             // how many steps
	Planned Result          // what they are to do (Item.Planned)
	Layout  json.RawMessage // what each covers (Item.Layout)
	FanOut  bool            // large enough to dispatch (Item.FanOut)
}

// Kind is what one kind of work does.
type Kind interface {
	// Plan returns an item's steps and what they are to do. It runs once
	// per item (a plan made before stands), after the change that wrote
	// the item committed (so it sees that change).
	Plan(ctx context.Context, it Item) (Plan, error)
	// Step runs step n (from 0) of an item and returns its result. It
	// must be idempotent.
	Step(ctx context.Context, it Item, n int) (Result, error)
}

// Store keeps work items and their steps' markers.
type Store interface {
	// WorkItem reads an item, strongly consistent.
	WorkItem(ctx context.Context, id int64) (Item, error)
	// ClaimWork takes an item that is running and whose lease has run
	// out at now, for a lease until lease (epoch ms): false when another
	// runner holds it or it is complete.
	ClaimWork(ctx context.Context, id int64, now time.Time, lease int64) (Item, bool, error)
	// RenewWork moves the lease of an item this runner holds (its lease
	// is held) to next: false when another runner took it over.
	RenewWork(ctx context.Context, id, held, next int64) (bool, error)
	// PlanWork sets an item's plan once: an item planned already keeps
	// its plan, which is returned.
	PlanWork(ctx context.Context, id int64, p Plan) (Item, error)
	// ExtendWork moves the lease of a running item forward to until,
	// unless it is later already: the progress of a dispatched item.
	ExtendWork(ctx context.Context, id, until int64) error
	// StepsDone reads the results of the steps done, by step.
	StepsDone(ctx context.Context, id int64) (map[int]Result, error)
	// FinishStep keeps a step's result, once: a marker written already
	// keeps the first result.
	FinishStep(ctx context.Context, id int64, n int, r Result, now time.Time) error
	// CompleteWork marks a running item complete with its totals (false
	// when it is complete already).
	CompleteWork(ctx context.Context, id int64, totals Result, now time.Time) (bool, error)
	// DueWork lists the running items whose lease has run out at now.
	DueWork(ctx context.Context, now time.Time) ([]int64, error)
}

// DefaultLease is how long a runner holds an item before it must renew
// its lease; a runner that died frees it after this.
const DefaultLease = 2 * time.Minute

// DefaultDispatchLease is how long a dispatched item waits for its next
// step to finish before the scheduled function dispatches its steps not
// done again: its steps may wait in the queue behind other items' steps.
const DefaultDispatchLease = 15 * time.Minute

// Sender sends the messages of dispatched steps to the queue that the
// queue function reads (SQS on AWS, the local stack's queue locally).
type Sender interface {
	Send(ctx context.Context, bodies []string) error
}

// Runner runs work items.
type Runner struct {
	Store Store
	Kinds map[string]Kind
	Now   func() time.Time
	Lease time.Duration // DefaultLease when 0
	// DispatchLease is the lease of a dispatched item, moved forward by
	// each of its steps; DefaultDispatchLease when 0.
	DispatchLease time.Duration
	// Sender dispatches the steps of items planned to fan out; without
	// one, they run one after another like the others.
	Sender Sender
	Log    *slog.Logger
}

func (r Runner) lease() time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return DefaultLease
}

func (r Runner) dispatchLease() time.Duration {
	if r.DispatchLease > 0 {
		return r.DispatchLease
	}
	return DefaultDispatchLease
}

// LeaseFrom is the lease a change gives the item it writes: its writer
// holds it from now on, and runs it at once (Continue).
func (r Runner) LeaseFrom(now time.Time) int64 { return now.Add(r.lease()).UnixMilli() }

// ErrUnknownKind is the error of an item whose kind the runner does not
// know.
var ErrUnknownKind = errors.New("work: unknown kind")

// Continue runs an item its caller holds (it wrote it, under the lease
// LeaseFrom gave, or claimed it): it plans it if need be, runs every step
// not done, and completes it; an item planned to fan out is dispatched
// instead (its lease handed to the queue), and returned running. When ctx
// ends first it gives its lease up, so that the scheduled function
// resumes the item at once, and returns the item as it stands (running)
// with ctx's error.
func (r Runner) Continue(ctx context.Context, it Item) (Item, error) {
	k, ok := r.Kinds[it.Kind]
	if !ok {
		return it, fmt.Errorf("work %d: %w %q", it.ID, ErrUnknownKind, it.Kind)
	}
	if it.Status == Complete {
		return it, nil
	}
	it, err := r.Plan(ctx, it)
	if err == nil && it.FanOut && r.Sender != nil {
		return r.dispatch(ctx, it)
	}
	if err == nil {
		it, err = r.run(ctx, k, it)
	}
	if err != nil {
		if _, rerr := r.Store.RenewWork(context.WithoutCancel(ctx), it.ID, it.Lease, 0); rerr != nil && r.Log != nil {
			r.Log.ErrorContext(ctx, "release work", "work_id", it.ID, "error", rerr.Error())
		}
		it.Lease = 0
		return it, fmt.Errorf("work %d: %w", it.ID, err)
	}
	return it, nil
}

// Plan plans an item that is not planned yet (its steps, and what they
// are to do), and returns it planned; a plan made before stands.
func (r Runner) Plan(ctx context.Context, it Item) (Item, error) {
	if it.Steps >= 0 {
		return it, nil
	}
	k, ok := r.Kinds[it.Kind]
	if !ok {
		return it, fmt.Errorf("work %d: %w %q", it.ID, ErrUnknownKind, it.Kind)
	}
	plan, err := k.Plan(ctx, it)
	if err != nil {
		return it, fmt.Errorf("plan: %w", err)
	}
	lease := it.Lease
	p, err := r.Store.PlanWork(ctx, it.ID, plan)
	if err != nil {
		return it, err
	}
	p.Lease = lease
	return p, nil
}

// dispatch hands a planned item it holds to the queue: its lease moves to
// DispatchLease from now (each step moves it again), then one message is
// sent for each step not done. An item whose steps are all done is
// completed instead.
func (r Runner) dispatch(ctx context.Context, it Item) (Item, error) {
	done, err := r.Store.StepsDone(ctx, it.ID)
	if err != nil {
		return r.release(ctx, it, err)
	}
	if len(done) >= it.Steps {
		it, err = r.complete(ctx, it, done)
		if err != nil {
			return r.release(ctx, it, err)
		}
		return it, nil
	}
	next := r.Now().Add(r.dispatchLease()).UnixMilli()
	held, err := r.Store.RenewWork(ctx, it.ID, it.Lease, next)
	switch {
	case err != nil:
		return r.release(ctx, it, err)
	case !held: // another runner took it over: it dispatches
		return it, nil
	}
	it.Lease = next
	var bodies []string
	for n := range it.Steps {
		if _, ok := done[n]; !ok {
			bodies = append(bodies, Message(it.ID, n))
		}
	}
	if err := r.Sender.Send(ctx, bodies); err != nil {
		// The scheduled function dispatches it again (a step sent twice
		// is done once).
		return r.release(ctx, it, fmt.Errorf("dispatch: %w", err))
	}
	return it, nil
}

// release gives up the lease of an item this runner holds after err.
func (r Runner) release(ctx context.Context, it Item, err error) (Item, error) {
	if _, rerr := r.Store.RenewWork(context.WithoutCancel(ctx), it.ID, it.Lease, 0); rerr != nil && r.Log != nil {
		r.Log.ErrorContext(ctx, "release work", "work_id", it.ID, "error", rerr.Error())
	}
	it.Lease = 0
	return it, fmt.Errorf("work %d: %w", it.ID, err)
}

// run runs the steps not done of a planned item, renewing the lease after
// each, and completes it.
func (r Runner) run(ctx context.Context, k Kind, it Item) (Item, error) {
	done, err := r.Store.StepsDone(ctx, it.ID)
	if err != nil {
		return it, err
	}
	for n := range it.Steps {
		if _, ok := done[n]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return it, err
		}
		res, err := r.step(ctx, k, it, n)
		if err != nil {
			return it, err
		}
		done[n] = res
		next := r.LeaseFrom(r.Now())
		held, err := r.Store.RenewWork(ctx, it.ID, it.Lease, next)
		if err != nil {
			return it, err
		}
		if !held { // another runner took it over: it finishes
			return it, errors.New("taken over by another runner")
		}
		it.Lease = next
	}
	return r.complete(ctx, it, done)
}

// step runs one step and keeps its result.
func (r Runner) step(ctx context.Context, k Kind, it Item, n int) (Result, error) {
	res, err := k.Step(ctx, it, n)
	if err != nil {
		return nil, fmt.Errorf("step %d: %w", n, err)
	}
	if res == nil {
		res = Result{}
	}
	if err := r.Store.FinishStep(ctx, it.ID, n, res, r.Now()); err != nil {
		return nil, err
	}
	return res, nil
}

// Step runs step n of item id unless it is done (for a fan-out, one
// message a step, sent once the item is planned: Plan).
func (r Runner) Step(ctx context.Context, id int64, n int) error {
	it, err := r.Store.WorkItem(ctx, id)
	if err != nil {
		return err
	}
	if it.Steps < 0 || n >= it.Steps {
		return fmt.Errorf("work %d: no step %d (planned steps: %d)", id, n, it.Steps)
	}
	k, ok := r.Kinds[it.Kind]
	if !ok {
		return fmt.Errorf("work %d: %w %q", id, ErrUnknownKind, it.Kind)
	}
	done, err := r.Store.StepsDone(ctx, id)
	if err != nil {
		return err
	}
	if _, ok := done[n]; ok || it.Status == Complete {
		return nil
	}
	if _, err = r.step(ctx, k, it, n); err != nil || !it.FanOut {
		return err
	}
	// A dispatched item progresses: the scheduled function leaves it to
	// the queue for another lease.
	return r.Store.ExtendWork(ctx, id, r.Now().Add(r.dispatchLease()).UnixMilli())
}

// Handle handles one message of the queue function (Message): it runs
// the step unless it is done, and completes the item if it was the last.
// A message delivered twice, or handled by two workers at once, changes
// nothing twice.
func (r Runner) Handle(ctx context.Context, body string) error {
	id, n, err := ReadMessage(body)
	if err != nil {
		return err
	}
	if err := r.Step(ctx, id, n); err != nil {
		return err
	}
	_, err = r.Complete(ctx, id)
	return err
}

// Complete completes item id when every step is done (for a fan-out,
// after each step), and reports whether the item is complete.
func (r Runner) Complete(ctx context.Context, id int64) (bool, error) {
	it, err := r.Store.WorkItem(ctx, id)
	if err != nil || it.Status == Complete || it.Steps < 0 {
		return it.Status == Complete, err
	}
	done, err := r.Store.StepsDone(ctx, id)
	if err != nil {
		return false, err
	}
	if len(done) < it.Steps {
		return false, nil
	}
	_, err = r.complete(ctx, it, done)
	return err == nil, err
}

// complete marks the item complete with the sum of its steps' results.
func (r Runner) complete(ctx context.Context, it Item, done map[int]Result) (Item, error) {
	totals := Result{}
	for n := range it.Steps {
		totals.Add(done[n])
	}
	now := r.Now()
	if _, err := r.Store.CompleteWork(ctx, it.ID, totals, now); err != nil {
		return it, err
	}
	it.Status, it.Totals, it.CompletedAt, it.Lease = Complete, totals, now, 0
	return it, nil
}

// Resume runs every item whose lease has run out at now (the scheduled
// function, every minute), one after another, each under a lease of its
// own; it returns how many it completed. An item another runner claims
// first is left to it.
func (r Runner) Resume(ctx context.Context, now time.Time) (int, error) {
	ids, err := r.Store.DueWork(ctx, now)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		it, claimed, err := r.Store.ClaimWork(ctx, id, now, r.LeaseFrom(now))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !claimed {
			continue
		}
		if it, err = r.Continue(ctx, it); err != nil {
			errs = append(errs, err)
			continue
		}
		if it.Status == Complete {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// message is the body of a queue message: a step of an item.
type message struct {
	Work int64 `json:"work"`
	Step *int  `json:"step"`
}

// Message is the body of the message of step n of item id.
func Message(id int64, n int) string {
	b, _ := json.Marshal(message{Work: id, Step: &n}) // plain values
	return string(b)
}

// ReadMessage reads a message's item and step.
func ReadMessage(body string) (int64, int, error) {
	var m message
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Work < 1 || m.Step == nil || *m.Step < 0 {
		return 0, 0, fmt.Errorf("work message names no step: %.200s", strconv.Quote(body))
	}
	return m.Work, *m.Step, nil
}
