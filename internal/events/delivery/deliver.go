package delivery

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/store"
)

// DeliverStore is what the deliverer reads and writes.
type DeliverStore interface {
	DeliveryWork(ctx context.Context, to scangate.Destination, eventID string) (store.Work, error)
	RecordAttempt(ctx context.Context, d scangate.Delivery, prev int) (bool, error)
	WebhookFailing(ctx context.Context, id int64, since time.Time) error
	WebhookDelivered(ctx context.Context, id int64) error
	DisableWebhook(ctx context.Context, id int64, reason string, now time.Time) (bool, error)
	ClaimStore
}

// Opener opens sealed secrets (*seal.Box).
type Opener interface {
	Open(purpose, sealed string) (string, error)
}

// NameTTL is how long a deliverer trusts a repository's name looked up by
// its id, and MaxNames how many it keeps.
const (
	NameTTL  = time.Hour
	MaxNames = 10000
)

// BusyWait is how long a status whose commit another post holds waits
// before it is tried again.
const BusyWait = 5 * time.Second

// Deliverer makes the attempts of the deliveries the queues hand it.
type Deliverer struct {
	Store  DeliverStore
	Queues deliverylane.Queues
	Box    Opener
	// Sender posts to webhooks (the egress rules for webhooks).
	Sender *webhook.Sender
	// Statuses is the egress policy of integrations, and StatusHTTP a
	// client of it.
	Statuses   egress.Policy
	StatusHTTP *http.Client
	// Names caches the repositories' names the providers look up by id,
	// for the execution environment.
	Names *commitstatus.Names
	// Backoff is the wait after a failed attempt (1 for the first), false
	// when it was the last (webhook.Backoff with a random source).
	Backoff func(attempt int) (time.Duration, bool)
	Now     func() time.Time
	// Dashboard is the dashboard's base URL, for the statuses' links; ""
	// for none.
	Dashboard string
	Log       *slog.Logger
}

// NewDeliverer returns the deliverer's queue handler (a
// trigger.QueueHandler): webhooks posted under rules, statuses under the
// same rules with private addresses when the configuration allows them,
// linked to the configured dashboard, waits by webhook.Backoff.
func NewDeliverer(st DeliverStore, q deliverylane.Queues, box Opener, rules egress.Policy, cfg config.Config, now func() time.Time,
	log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	statuses := rules.WithPrivate(cfg.PrivateIntegrations)
	timeout := cmp.Or(cfg.AttemptTimeout, webhook.Timeout)
	// The signatures' timestamps are the real time (Sender.Now): a
	// receiver checks them against its own clock.
	sender := webhook.NewSender(rules)
	sender.Client = rules.Client(timeout)
	d := &Deliverer{Store: st, Queues: q, Box: box, Sender: sender, Statuses: statuses, StatusHTTP: statuses.Client(timeout),
		Names:   commitstatus.NewNames(NameTTL, MaxNames),
		Backoff: func(attempt int) (time.Duration, bool) { return webhook.Backoff(attempt, jitter{}) }, Now: now,
		Dashboard: cfg.DashboardURL, Log: log}
	return d.Handle
}

// jitter draws the backoff's jitter from math/rand/v2's global source,
// which is safe for concurrent use.
type jitter struct{}

func (jitter) Float64() float64 { return rand.Float64() }

// Handle attempts the deliveries of a batch, all at once (one slow
// receiver delays no other message of the batch), and names in its
// partial batch response the messages to be received again: those kept
// for a later attempt (hidden until it is due) and those whose handling
// failed.
func (d *Deliverer) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var mu sync.Mutex
	var resp events.SQSEventResponse
	var wg sync.WaitGroup
	for _, m := range ev.Records {
		wg.Go(func() {
			if d.one(ctx, m) {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return resp, nil
}

// job is one message being handled.
type job struct {
	m    events.SQSMessage
	lane deliverylane.Lane
	w    store.Work
	now  time.Time
}

// one handles a message and reports whether it is to be received again.
func (d *Deliverer) one(ctx context.Context, m events.SQSMessage) bool {
	in, ok := d.Queues.LaneOf(m.EventSourceARN)
	if !ok {
		in = deliverylane.Retry
	}
	to, eventID, err := deliverylane.Read(m.Body)
	if err != nil {
		d.Log.ErrorContext(ctx, "unreadable delivery message; dead-lettered", "error", err.Error())
		return d.Queues.Send(ctx, deliverylane.Dead, m.Body, 0) != nil
	}
	w, err := d.Store.DeliveryWork(ctx, to, eventID)
	if err != nil {
		d.Log.ErrorContext(ctx, "delivery not read; it comes back", "event", eventID, "error", err.Error())
		return true
	}
	j := &job{m: m, lane: in, w: w, now: d.Now()}
	switch {
	case w.Delivery == nil || w.Delivery.Status != scangate.DeliveryPending:
		return false // done, or never created: nothing to attempt
	case w.Event == nil:
		return d.end(ctx, j, scangate.DeliveryFailed, "the event expired before it was delivered")
	case w.Delivery.Due > j.now.UnixMilli():
		return d.later(ctx, j, time.UnixMilli(w.Delivery.Due).Sub(j.now))
	case to.Kind == scangate.DestWebhook:
		return d.webhook(ctx, j)
	}
	return d.status(ctx, j)
}

// later keeps a message for an attempt due after wait: a message of the
// fast lane moves to the retry lane, delayed (at most lane.MaxDelay: one that
// comes up early is hidden again); one of the retry lane is hidden (at
// most lane.MaxHide, longer than any wait of the schedule).
func (d *Deliverer) later(ctx context.Context, j *job, wait time.Duration) bool {
	if j.lane == deliverylane.Fast {
		if err := d.Queues.Send(ctx, deliverylane.Retry, j.m.Body, min(max(wait, 0), deliverylane.MaxDelay)); err != nil {
			d.Log.ErrorContext(ctx, "delivery not moved to the retry queue; it comes back", "error", err.Error())
			return true
		}
		return false
	}
	if err := d.Queues.Hide(ctx, j.lane, j.m.ReceiptHandle, min(max(wait, time.Second), deliverylane.MaxHide)); err != nil {
		// It comes back after the queue's visibility timeout and is
		// hidden again then.
		d.Log.ErrorContext(ctx, "delivery message not hidden", "error", err.Error())
	}
	return true
}

// end records a delivery's end without an attempt (its destination is
// gone, its event expired, a newer status was posted).
func (d *Deliverer) end(ctx context.Context, j *job, status scangate.DeliveryStatus, why string) bool {
	next := *j.w.Delivery
	next.Status, next.Due = status, 0
	if why != "" {
		next.Last = &scangate.Attempt{At: scangate.At(j.now), Error: why}
		if prev := j.w.Delivery.Last; prev != nil {
			next.Last.StatusCode, next.Last.Response, next.Last.DurationMS = prev.StatusCode, prev.Response, prev.DurationMS
		}
	}
	if _, err := d.Store.RecordAttempt(ctx, next, j.w.Delivery.Attempts); err != nil {
		d.Log.ErrorContext(ctx, "delivery end not recorded; it comes back", "event", next.EventID, "error", err.Error())
		return true
	}
	return false
}

// webhook makes an attempt of a webhook delivery.
func (d *Deliverer) webhook(ctx context.Context, j *job) bool {
	wh, e := j.w.Webhook, j.w.Event
	test := wh != nil && e.Webhook == wh.ID
	switch {
	case wh == nil:
		return d.end(ctx, j, scangate.DeliveryCancelled, "the webhook was deleted")
	case !wh.Active && !test:
		return d.end(ctx, j, scangate.DeliveryCancelled, "the webhook is disabled")
	case j.lane == deliverylane.Fast && wh.FailingSince != nil:
		// No attempt in the fast lane while its receiver is failing.
		return d.later(ctx, j, 0)
	}
	signer, err := d.signer(*wh, j.now)
	if err != nil {
		d.Log.ErrorContext(ctx, "webhook secret does not open; the delivery comes back", "webhook", wh.ID, "error", err.Error())
		return true
	}
	body, err := webhook.Event{ID: e.ID, Type: e.Type, OccurredAt: e.OccurredAt, Data: e.Data}.Body()
	if err != nil {
		return d.end(ctx, j, scangate.DeliveryFailed, err.Error())
	}
	res, err := d.Sender.Send(ctx, webhook.Delivery{URL: wh.URL, ID: e.ID, Body: body, Signer: signer})
	if err != nil {
		return d.end(ctx, j, scangate.DeliveryFailed, err.Error())
	}
	a := scangate.Attempt{At: scangate.At(j.now), StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds(),
		Error: res.Error, Response: res.Response}
	next, wait := d.judge(j, a, res.Outcome == webhook.Delivered, res.Outcome == webhook.Retry)
	gone := res.Outcome == webhook.Gone
	if reason := d.streak(ctx, *wh, res.Outcome, j.now); reason != "" {
		if _, err := d.Store.DisableWebhook(ctx, wh.ID, reason, j.now); err != nil {
			d.Log.ErrorContext(ctx, "webhook not disabled", "webhook", wh.ID, "error", err.Error())
		}
		next.Status, next.Due = scangate.DeliveryFailed, 0
	}
	return d.record(ctx, j, next, wait, !gone)
}

// signer is the webhook's signer at now: its secret, and the previous one
// while it is live.
func (d *Deliverer) signer(w scangate.Webhook, now time.Time) (*webhook.Signer, error) {
	var secrets []string
	for _, s := range w.Secrets(now) {
		plain, err := d.Box.Open(seal.WebhookSecret, s)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, plain)
	}
	return webhook.NewSigner(secrets...)
}

// streak keeps the subscription's failure streak and returns why it must
// be disabled, if it must: it answered 410, or its deliveries have failed
// for webhook.DisableAfter.
func (d *Deliverer) streak(ctx context.Context, w scangate.Webhook, o webhook.Outcome, now time.Time) string {
	var err error
	switch {
	case o == webhook.Delivered && w.FailingSince != nil:
		err = d.Store.WebhookDelivered(ctx, w.ID)
	case o != webhook.Delivered && w.FailingSince == nil:
		err = d.Store.WebhookFailing(ctx, w.ID, now)
	}
	if err != nil {
		d.Log.ErrorContext(ctx, "webhook failure streak not recorded", "webhook", w.ID, "error", err.Error())
	}
	switch {
	case o == webhook.Gone:
		return "the receiver answered 410 Gone"
	case o == webhook.Retry && w.FailingSince != nil && webhook.ShouldDisable(w.FailingSince.Time, now):
		return "every delivery failed from " + w.FailingSince.String() + " for " + webhook.DisableAfter.String()
	}
	return ""
}

// judge is the delivery after attempt a: delivered, pending again after a
// wait when the failure may be retried and attempts are left, else failed.
func (d *Deliverer) judge(j *job, a scangate.Attempt, delivered, retry bool) (scangate.Delivery, time.Duration) {
	next := *j.w.Delivery
	next.Attempts++
	next.Last, next.Due = &a, 0
	switch {
	case delivered:
		next.Status = scangate.DeliveryDelivered
	case retry:
		if wait, ok := d.Backoff(next.Attempts); ok {
			next.Due = j.now.Add(wait).UnixMilli()
			return next, wait
		}
		next.Status = scangate.DeliveryFailed
	default:
		next.Status = scangate.DeliveryFailed
	}
	return next, 0
}

// record writes an attempt and schedules what follows: the next attempt,
// or, when the delivery failed and alarm says so, the dead-letter queue
// (whose alarm an operator hears; a receiver's 410 is its own choice and
// raises none).
func (d *Deliverer) record(ctx context.Context, j *job, next scangate.Delivery, wait time.Duration, alarm bool) bool {
	ok, err := d.Store.RecordAttempt(ctx, next, j.w.Delivery.Attempts)
	switch {
	case err != nil:
		d.Log.ErrorContext(ctx, "attempt not recorded; the delivery comes back", "event", next.EventID, "error", err.Error())
		return true
	case !ok:
		return false // another copy of the message recorded this attempt
	}
	d.measure(ctx, j, next, alarm)
	switch {
	case next.Status == scangate.DeliveryPending:
		return d.later(ctx, j, wait)
	case next.Status == scangate.DeliveryFailed && alarm:
		d.Log.WarnContext(ctx, "delivery failed; dead-lettered", "destination", next.To.Kind, "id", next.To.ID,
			"event", next.EventID, "attempts", next.Attempts)
		if err := d.Queues.Send(ctx, deliverylane.Dead, j.m.Body, 0); err != nil {
			d.Log.ErrorContext(ctx, "failed delivery not dead-lettered", "event", next.EventID, "error", err.Error())
		}
	}
	return false
}

// measure emits the metrics of an attempt recorded: its outcome
// (delivered, retried, failed, or dead-lettered when the failure raises
// the dead-letter queue's alarm) and, for a delivery, how long after its
// event it arrived.
func (d *Deliverer) measure(ctx context.Context, j *job, next scangate.Delivery, alarm bool) {
	m := metrics.New(d.Log)
	outcome := "failed"
	switch {
	case next.Status == scangate.DeliveryDelivered:
		outcome = "delivered"
		m.Emit(ctx, nil, metrics.Millis(metrics.DeliveryLatency, j.now.Sub(next.CreatedAt.Time)))
	case next.Status == scangate.DeliveryPending:
		outcome = "retried"
	case alarm:
		outcome = "dead_lettered"
	}
	m.Emit(ctx, []metrics.Dim{{Name: metrics.DimOutcome, Value: outcome}}, metrics.CountOf(metrics.Deliveries, 1))
}

// status posts the commit status of a gate change, newest gate first.
func (d *Deliverer) status(ctx context.Context, j *job) bool {
	in, e := j.w.Integration, j.w.Event
	if in == nil {
		return d.end(ctx, j, scangate.DeliveryCancelled, "the integration was removed")
	}
	var g scangate.GateChange
	var gate commitstatus.Gate
	if err := errors.Join(json.Unmarshal(e.Data, &g), json.Unmarshal(e.Data, &gate)); err != nil || g.Sequence < 1 || g.HeadSHA == nil || g.RepoID < 1 {
		return d.end(ctx, j, scangate.DeliveryFailed, fmt.Sprintf("the gate change carries no commit to report: %v", err))
	}
	token, err := d.Box.Open(seal.IntegrationToken, in.Token)
	if err != nil {
		d.Log.ErrorContext(ctx, "integration token does not open; the delivery comes back", "vc_id", in.VcID, "error", err.Error())
		return true
	}
	a := scangate.Attempt{At: scangate.At(j.now)}
	poster, err := commitstatus.New(commitstatus.Integration{Type: in.Type, APIURL: in.APIURL, Token: token,
		AppID: in.AppID, InstallationID: in.InstallationID}, d.Statuses, d.StatusHTTP, d.Names)
	if err != nil {
		a.Error = err.Error()
		next, wait := d.judge(j, a, false, true)
		return d.record(ctx, j, next, wait, true)
	}
	st := commitstatus.FromGate(gate, d.Dashboard)
	if d.Dashboard == "" {
		st.TargetURL = ""
	}
	claims := &claims{st: d.Store, now: d.Now}
	key := commitstatus.Key{VcID: in.VcID, RepoID: g.RepoID, SHA: *g.HeadSHA}
	if gh, ok := poster.(*commitstatus.GitHub); ok && in.Type == scangate.IntegrationGitHubApp {
		poster = checked{Poster: poster, gh: gh, run: commitstatus.CheckRunOf(gate, d.Dashboard, nil), st: d.Store,
			claims: claims, key: key, seq: g.Sequence}
	}
	start := time.Now()
	posted, err := commitstatus.Ordered{Poster: poster, Claims: claims}.Post(ctx, key, g.Sequence, st)
	switch {
	case errors.Is(err, commitstatus.ErrBusy):
		return d.later(ctx, j, BusyWait) // not an attempt: another post of the commit is under way
	case !posted && err == nil:
		return d.end(ctx, j, scangate.DeliverySuperseded, "")
	}
	a.DurationMS = time.Since(start).Milliseconds()
	var pe *commitstatus.Error
	if errors.As(err, &pe) {
		a.StatusCode = pe.StatusCode
	}
	if err != nil {
		a.Error = err.Error()
	}
	next, wait := d.judge(j, a, err == nil, commitstatus.Retryable(err))
	return d.record(ctx, j, next, wait, true)
}
