package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// Webhooks (subscriptions) are one partition, which the dispatcher reads
// whole, strongly consistent, for each batch of events (so a subscription
// created a moment before an event gets it):
//
//	WEBHOOKS / <id, 19 digits>   url, events, description, active, secrets (sealed), ...
//	COUNTER#webhooks / COUNTER   n: how many exist, moved with each create
//	                             and delete, at most scangate.MaxWebhooks
//
// Every change is a put over the version read (ver), with its audit entry.
// The delivery function's bookkeeping (the failure streak, disabling) moves
// the version too, so an admin's change made meanwhile is read again.

const (
	webhooksPK     = "WEBHOOKS"
	lWebhook       = "webhook"
	lWebhookCount  = "webhook-count"
	aURL           = "url"
	aEvents        = "events"
	aDescription   = "description"
	aDisabled      = "disabled_reason"
	aFailingSince  = "failing_since" // epoch ms; 0 when its last attempt was delivered
	aSecret        = "secret"        // sealed
	aPrevSecret    = "prev_secret"   // sealed
	aPrevUntil     = "prev_until"    // epoch ms
	webhookTarget  = "webhook"
	webhookCounter = "COUNTER#webhooks"
)

func webhookKey(id int64) item { return key(webhooksPK, fmt.Sprintf("%019d", id)) }

func msOf(t *scangate.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}

func timeOfMS(ms int64) *scangate.Time {
	if ms <= 0 {
		return nil
	}
	t := scangate.At(time.UnixMilli(ms))
	return &t
}

func webhookItem(w scangate.Webhook, ver int64) item {
	it := webhookKey(w.ID)
	it[aID], it[aURL], it[aDescription], it[aActive] = num(w.ID), str(w.URL), str(w.Description), boolean(w.Active)
	setStrings(it, aEvents, w.Events)
	if w.DisabledReason != "" {
		it[aDisabled] = str(w.DisabledReason)
	}
	it[aFailingSince] = num(msOf(w.FailingSince))
	it[aCreatedBy], it[aCreatedAt] = num(w.CreatedBy), str(w.CreatedAt.String())
	it[aUpdBy], it[aUpdatedAt] = num(w.UpdatedBy), str(w.UpdatedAt.String())
	it[aSecret] = str(w.Secret)
	if w.Previous != "" {
		it[aPrevSecret], it[aPrevUntil] = str(w.Previous), num(msOf(w.PreviousUntil))
	}
	it[aVer] = num(ver)
	return it
}

func webhookFrom(it item) (scangate.Webhook, int64) {
	return scangate.Webhook{
		ID: getN(it, aID), URL: getS(it, aURL), Events: getStrings(it, aEvents), Description: getS(it, aDescription),
		Active: getBool(it, aActive, false), DisabledReason: getS(it, aDisabled), FailingSince: timeOfMS(getN(it, aFailingSince)),
		CreatedBy: getN(it, aCreatedBy), CreatedAt: getTime(it, aCreatedAt), UpdatedBy: getN(it, aUpdBy), UpdatedAt: getTime(it, aUpdatedAt),
		Secret: getS(it, aSecret), Previous: getS(it, aPrevSecret), PreviousUntil: timeOfMS(getN(it, aPrevUntil)),
	}, getN(it, aVer)
}

func webhookAudit(id int64) scangate.Target {
	return scangate.Target{Type: webhookTarget, ID: strconv.FormatInt(id, 10)}
}

// webhookChanges are the audited fields of a subscription that changed from
// old to w (old with no id: created). Secrets are never told, only that
// one was rotated.
func webhookChanges(old, w scangate.Webhook) scangate.Changes {
	c := scangate.Changes{}
	created := old.ID == 0
	from := func(v any) any {
		if created {
			return nil
		}
		return v
	}
	c.Set("url", from(old.URL), w.URL)
	if !slices.Equal(old.Events, w.Events) {
		c["events"] = scangate.Change{From: from(scangate.NonNil(old.Events)), To: w.Events}
	}
	c.Set("description", from(old.Description), w.Description)
	c.Set("active", from(old.Active), w.Active)
	c.Set("disabled_reason", nullable(old.DisabledReason), nullable(w.DisabledReason))
	if old.Secret != w.Secret && !created {
		c.Set("secret", nil, "rotated")
	}
	return c
}

// CreateWebhook stores a new subscription (its secret sealed already)
// under the next webhook id, with its audit entry; a conflict when
// scangate.MaxWebhooks exist.
func (s *Store) CreateWebhook(ctx context.Context, w scangate.Webhook, who scangate.Who, now time.Time) (scangate.Webhook, error) {
	id, err := s.nextID(ctx, "webhook")
	if err != nil {
		return scangate.Webhook{}, err
	}
	at := scangate.At(now)
	w.ID, w.CreatedAt, w.UpdatedAt, w.CreatedBy, w.UpdatedBy = id, at, at, actorID(who), actorID(who)
	w.DisabledReason, w.FailingSince, w.Previous, w.PreviousUntil = "", nil, "", nil
	t := s.newTx()
	t.put(lWebhook, webhookItem(w, 1), when("attribute_not_exists("+ref(aPK)+")"))
	t.update(lWebhookCount, key(webhookCounter, "COUNTER"), "ADD "+ref(aN)+" :one", item{":one": num(1)},
		when("attribute_not_exists("+ref(aN)+") OR "+ref(aN)+" < :max", ":max", num(scangate.MaxWebhooks)))
	s.addAudit(t, scangate.NewAudit(scangate.AuditWebhookCreate, who, webhookAudit(id), webhookChanges(scangate.Webhook{}, w), now))
	err = s.commitRetried(ctx, "create webhook", t)
	if failed(err, lWebhookCount) {
		return scangate.Webhook{}, scangate.Errorf(scangate.KindConflict, "there are %d webhooks, the most a deployment may have", scangate.MaxWebhooks)
	}
	if err != nil {
		return scangate.Webhook{}, err
	}
	return w, nil
}

// commitRetried commits a transaction that does not depend on what was
// read, running it again when it lost a race with another transaction.
func (s *Store) commitRetried(ctx context.Context, op string, t *tx) error {
	return s.retry.Do(ctx, op, func(int) (bool, error) {
		err := s.commit(ctx, op, t)
		if lostRace(err) {
			return false, nil
		}
		return true, err
	})
}

// Webhook reads a subscription (strongly consistent).
func (s *Store) Webhook(ctx context.Context, id int64) (scangate.Webhook, error) {
	w, _, err := s.webhook(ctx, id)
	return w, err
}

func (s *Store) webhook(ctx context.Context, id int64) (scangate.Webhook, int64, error) {
	it, err := s.getItem(ctx, "get webhook", webhookKey(id))
	if err != nil {
		return scangate.Webhook{}, 0, err
	}
	if it == nil {
		return scangate.Webhook{}, 0, scangate.Errorf(scangate.KindNotFound, "no webhook has the id %d", id)
	}
	w, ver := webhookFrom(it)
	return w, ver, nil
}

// Webhooks reads every subscription (at most scangate.MaxWebhooks: one
// Query of their partition, strongly consistent).
func (s *Store) Webhooks(ctx context.Context) ([]scangate.Webhook, error) {
	items, err := s.queryAll(ctx, "list webhooks", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk"),
		ExpressionAttributeValues: item{":pk": str(webhooksPK)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	out := make([]scangate.Webhook, len(items))
	for i, it := range items {
		out[i], _ = webhookFrom(it)
	}
	return out, nil
}

// WebhooksPage reads a page of the subscriptions, by id.
func (s *Store) WebhooksPage(ctx context.Context, limit int, after map[string]string) (scangate.Page[scangate.Webhook], error) {
	q := pageQuery{pk: aPK, sk: aSK, value: webhooksPK, strong: true}
	p, err := s.queryPage(ctx, "list webhooks", q, limit, after)
	if err != nil {
		return scangate.Page[scangate.Webhook]{}, err
	}
	return pageOf(q, p, func(it item) scangate.Webhook { w, _ := webhookFrom(it); return w }), nil
}

// changeWebhook reads a subscription, changes it with fn (which may refuse)
// and writes it over the version read with the audit entry of action,
// again from a new read when another change came first.
func (s *Store) changeWebhook(ctx context.Context, op, action string, id int64, who scangate.Who, now time.Time,
	fn func(scangate.Webhook) (scangate.Webhook, error)) (scangate.Webhook, error) {
	var w scangate.Webhook
	err := s.retry.Do(ctx, op, func(int) (bool, error) {
		cur, ver, err := s.webhook(ctx, id)
		if err != nil {
			return true, err
		}
		if w, err = fn(cur); err != nil {
			return true, err
		}
		w.UpdatedAt = scangate.At(now)
		if who.Actor != nil {
			w.UpdatedBy = who.Actor.UserID
		}
		t := s.newTx()
		t.put(lWebhook, webhookItem(w, ver+1), when(ref(aVer)+" = :ver", ":ver", num(ver)))
		s.addAudit(t, scangate.NewAudit(action, who, webhookAudit(id), webhookChanges(cur, w), now))
		err = s.commit(ctx, op, t)
		if lostRace(err, lWebhook) {
			return false, nil
		}
		return true, err
	})
	return w, err
}

// UpdateWebhook applies a change to a subscription, with its audit entry.
func (s *Store) UpdateWebhook(ctx context.Context, id int64, c scangate.WebhookChange, who scangate.Who, now time.Time) (scangate.Webhook, error) {
	return s.changeWebhook(ctx, "update webhook", scangate.AuditWebhookUpdate, id, who, now, func(w scangate.Webhook) (scangate.Webhook, error) {
		return c.ApplyTo(w), nil
	})
}

// RotateWebhookSecret makes sealed the subscription's signing secret; the
// secret it replaces keeps signing beside it until now + SecretOverlap.
func (s *Store) RotateWebhookSecret(ctx context.Context, id int64, sealed string, who scangate.Who, now time.Time) (scangate.Webhook, error) {
	return s.changeWebhook(ctx, "rotate webhook secret", scangate.AuditWebhookRotate, id, who, now, func(w scangate.Webhook) (scangate.Webhook, error) {
		until := scangate.At(now.Add(scangate.SecretOverlap))
		w.Previous, w.PreviousUntil, w.Secret = w.Secret, &until, sealed
		return w, nil
	})
}

// DisableWebhook deactivates a subscription for a reason of scangate's own
// (410, days of failures), with an audit entry whose actor is the system.
// It reports false when the subscription was inactive already (or is gone).
func (s *Store) DisableWebhook(ctx context.Context, id int64, reason string, now time.Time) (bool, error) {
	disabled := false
	_, err := s.changeWebhook(ctx, "disable webhook", scangate.AuditWebhookUpdate, id, scangate.Who{RequestID: "deliver-events"}, now,
		func(w scangate.Webhook) (scangate.Webhook, error) {
			if !w.Active {
				return w, errInactive
			}
			w.Active, w.DisabledReason, disabled = false, reason, true
			return w, nil
		})
	if errors.Is(err, errInactive) || scangate.KindOf(err) == scangate.KindNotFound {
		return false, nil
	}
	return disabled && err == nil, err
}

var errInactive = scangate.Errorf(scangate.KindConflict, "the webhook is inactive already")

// WebhookFailing starts a subscription's failure streak at since unless
// one has begun; WebhookDelivered ends it. Each writes only when the
// streak changes (a conditional update, which moves the version).
func (s *Store) WebhookFailing(ctx context.Context, id int64, since time.Time) error {
	return s.setStreak(ctx, id, since.UnixMilli(), ref(aFailingSince)+" = :zero")
}

// WebhookDelivered ends a subscription's failure streak.
func (s *Store) WebhookDelivered(ctx context.Context, id int64) error {
	return s.setStreak(ctx, id, 0, ref(aFailingSince)+" > :zero")
}

func (s *Store) setStreak(ctx context.Context, id, ms int64, cond string) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       webhookKey(id),
		UpdateExpression:          aws.String("SET " + ref(aFailingSince) + " = :ms ADD " + ref(aVer) + " :one"),
		ConditionExpression:       aws.String("attribute_exists(" + ref(aPK) + ") AND " + cond),
		ExpressionAttributeValues: item{":ms": num(ms), ":zero": num(0), ":one": num(1)},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("webhook failure streak", err)
	}
	return nil
}

// DeleteWebhook deletes a subscription, with its audit entry. Its
// deliveries stay until they expire; those still pending are cancelled
// when they come up.
func (s *Store) DeleteWebhook(ctx context.Context, id int64, who scangate.Who, now time.Time) error {
	return s.retry.Do(ctx, "delete webhook", func(int) (bool, error) {
		cur, ver, err := s.webhook(ctx, id)
		if err != nil {
			return true, err
		}
		t := s.newTx()
		t.del(lWebhook, webhookKey(id), when(ref(aVer)+" = :ver", ":ver", num(ver)))
		t.update(lWebhookCount, key(webhookCounter, "COUNTER"), "ADD "+ref(aN)+" :minus", item{":minus": num(-1)}, nil)
		s.addAudit(t, scangate.NewAudit(scangate.AuditWebhookDelete, who, webhookAudit(id), webhookChanges(cur, scangate.Webhook{
			ID: cur.ID, Events: cur.Events, Secret: cur.Secret}), now))
		err = s.commit(ctx, "delete webhook", t)
		if lostRace(err, lWebhook) {
			return false, nil
		}
		return true, err
	})
}

// TestWebhook writes a webhook.test event for one subscription (whatever
// its event types), with the subscription as its data and an audit entry;
// not found when it does not exist.
func (s *Store) TestWebhook(ctx context.Context, id int64, who scangate.Who, now time.Time) (scangate.Event, error) {
	w, ver, err := s.webhook(ctx, id)
	if err != nil {
		return scangate.Event{}, err
	}
	t := s.newTx()
	t.check(lWebhook, webhookKey(id), when(ref(aVer)+" = :ver", ":ver", num(ver)))
	e := scangate.NewEvent(scangate.EventWebhookTest, now, scangate.ViewWebhook(w, now))
	e.Webhook = id
	e = s.addEvent(t, e)
	s.addAudit(t, scangate.NewAudit(scangate.AuditWebhookTest, who, webhookAudit(id), scangate.Changes{"event": {To: e.ID}}, now))
	err = s.commit(ctx, "test webhook", t)
	if failed(err, lWebhook) || lostRace(err) {
		// Changed or deleted meanwhile: the caller may send it again.
		return scangate.Event{}, scangate.Errorf(scangate.KindConflict, "webhook %d changed while its test was written; send it again", id)
	}
	return e, err
}
