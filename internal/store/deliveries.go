package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// A delivery is one event for one destination, in the destination's
// partition, keyed by the event's id: the dispatcher creates it with a
// conditional put, so a stream record handled twice creates it once.
//
//	WEBHOOK#<id> / DELIVERY#<event id>       a webhook's deliveries (its log, newest first)
//	INTEGRATION#<vc_id> / DELIVERY#<event id>  commit statuses
//
// It holds where the delivery is (status, attempts made, when the next is
// due) and its latest attempt; each attempt is recorded under the number of
// attempts it read (a conditional update), so two copies of one queue
// message never record one attempt twice. Deliveries expire through the
// TTL with their events.

// Attributes of deliveries.
const (
	aEventID  = "event"
	aAttempts = "attempts"
	aDue      = "due" // epoch ms
	aAt       = "at"
	aCode     = "code"
	aMS       = "ms"
	aError    = "error"
	aResponse = "resp"
	lDelivery = "delivery"
)

// DeliveryRetention is how long a delivery is kept.
const DeliveryRetention = DefaultEventRetention

func destinationPK(to scangate.Destination) string {
	if to.Kind == scangate.DestIntegration {
		return integrationPK(to.ID)
	}
	return "WEBHOOK#" + strconv.FormatInt(to.ID, 10)
}

func deliveryKey(to scangate.Destination, eventID string) item {
	return key(destinationPK(to), "DELIVERY#"+eventID)
}

func deliveryItem(d scangate.Delivery) item {
	it := deliveryKey(d.To, d.EventID)
	it[aEventID], it[aType], it[aStatus] = str(d.EventID), str(d.EventType), str(string(d.Status))
	it[aAttempts], it[aDue], it[aCreatedAt] = num(int64(d.Attempts)), num(d.Due), str(d.CreatedAt.String())
	it[aTTL] = num(d.CreatedAt.Add(DeliveryRetention).Unix())
	return it
}

func deliveryFrom(it item) scangate.Delivery {
	d := scangate.Delivery{EventID: getS(it, aEventID), EventType: getS(it, aType), Status: scangate.DeliveryStatus(getS(it, aStatus)),
		Attempts: int(getN(it, aAttempts)), Due: getN(it, aDue), CreatedAt: getTime(it, aCreatedAt)}
	pk := getS(it, aPK)
	if rest, ok := strings.CutPrefix(pk, "WEBHOOK#"); ok {
		d.To.Kind = scangate.DestWebhook
		d.To.ID, _ = strconv.ParseInt(rest, 10, 64)
	} else if rest, ok := strings.CutPrefix(pk, "INTEGRATION#"); ok {
		d.To.Kind = scangate.DestIntegration
		d.To.ID, _ = strconv.ParseInt(rest, 10, 64)
	}
	if _, ok := it[aAt]; ok {
		d.Last = &scangate.Attempt{At: getTime(it, aAt), StatusCode: int(getN(it, aCode)), DurationMS: getN(it, aMS),
			Error: getS(it, aError), Response: getS(it, aResponse)}
	}
	return d
}

// CreateDelivery stores a new pending delivery unless one exists for the
// same event and destination; it returns the delivery as stored and
// whether this call created it.
func (s *Store) CreateDelivery(ctx context.Context, d scangate.Delivery) (scangate.Delivery, bool, error) {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: deliveryItem(d),
		ConditionExpression:      aws.String("attribute_not_exists(" + ref(aPK) + ")"),
		ExpressionAttributeNames: map[string]string{ref(aPK): aPK}})
	switch {
	case conditionFailed(err):
		cur, err := s.Delivery(ctx, d.To, d.EventID)
		return cur, false, err
	case err != nil:
		return scangate.Delivery{}, false, dbErr("create delivery", err)
	}
	return d, true, nil
}

// Delivery reads a delivery (strongly consistent).
func (s *Store) Delivery(ctx context.Context, to scangate.Destination, eventID string) (scangate.Delivery, error) {
	it, err := s.getItem(ctx, "get delivery", deliveryKey(to, eventID))
	if err != nil {
		return scangate.Delivery{}, err
	}
	if it == nil {
		return scangate.Delivery{}, scangate.Errorf(scangate.KindNotFound, "no delivery %s to %s %d", eventID, to.Kind, to.ID)
	}
	return deliveryFrom(it), nil
}

// Work is what an attempt of a delivery reads, in one BatchGetItem: the
// delivery, its event and its destination; nil for what does not exist.
type Work struct {
	Delivery    *scangate.Delivery
	Event       *scangate.Event
	Webhook     *scangate.Webhook
	Integration *scangate.Integration
}

// DeliveryWork reads a delivery, its event and its destination at once
// (strongly consistent).
func (s *Store) DeliveryWork(ctx context.Context, to scangate.Destination, eventID string) (Work, error) {
	dest := webhookKey(to.ID)
	if to.Kind == scangate.DestIntegration {
		dest = integrationKey(to.ID)
	}
	items, err := s.batchGetAll(ctx, "get delivery", []item{deliveryKey(to, eventID), eventKey(eventID), dest})
	if err != nil {
		return Work{}, err
	}
	var w Work
	for _, it := range items {
		switch pk, sk := getS(it, aPK), getS(it, aSK); {
		case strings.HasPrefix(sk, "DELIVERY#"):
			d := deliveryFrom(it)
			w.Delivery = &d
		case strings.HasPrefix(pk, EventPrefix):
			e := eventFrom(it)
			w.Event = &e
		case pk == webhooksPK:
			wh, _ := webhookFrom(it)
			w.Webhook = &wh
		default:
			in := integrationFrom(it)
			w.Integration = &in
		}
	}
	return w, nil
}

// RecordAttempt writes a delivery's new state (status, attempts, due, and
// its latest attempt when Last is set) over the state read, which had
// prev attempts and was pending. It reports false, writing nothing, when
// that state had changed: another copy of the message came first.
func (s *Store) RecordAttempt(ctx context.Context, d scangate.Delivery, prev int) (bool, error) {
	set := "SET " + ref(aStatus) + " = :status, " + ref(aAttempts) + " = :attempts, " + ref(aDue) + " = :due"
	vals := item{":status": str(string(d.Status)), ":attempts": num(int64(d.Attempts)), ":due": num(d.Due),
		":prev": num(int64(prev)), ":pending": str(string(scangate.DeliveryPending))}
	if a := d.Last; a != nil {
		set += ", " + ref(aAt) + " = :at, " + ref(aCode) + " = :code, " + ref(aMS) + " = :ms, " + ref(aError) + " = :error, " +
			ref(aResponse) + " = :resp"
		vals[":at"], vals[":code"], vals[":ms"] = str(a.At.String()), num(int64(a.StatusCode)), num(a.DurationMS)
		vals[":error"], vals[":resp"] = str(a.Error), str(a.Response)
	}
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: deliveryKey(d.To, d.EventID), UpdateExpression: aws.String(set),
		ConditionExpression:       aws.String(ref(aAttempts) + " = :prev AND " + ref(aStatus) + " = :pending"),
		ExpressionAttributeValues: vals,
	})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, dbErr("record delivery attempt", err)
	}
	return true, nil
}

// Redeliver makes a webhook's delivery pending again, due at now, with a
// new series of attempts, and writes the audit entry; the caller then
// queues it. Not found when the webhook has no such delivery, or no longer
// exists (a deleted subscription's deliveries stay until they expire).
func (s *Store) Redeliver(ctx context.Context, webhookID int64, eventID string, who scangate.Who, now time.Time) (scangate.Delivery, error) {
	to := scangate.Destination{Kind: scangate.DestWebhook, ID: webhookID}
	d, err := s.Delivery(ctx, to, eventID)
	if err != nil {
		return scangate.Delivery{}, err
	}
	t := s.newTx()
	t.update(lDelivery, deliveryKey(to, eventID), "SET "+ref(aStatus)+" = :pending, "+ref(aAttempts)+" = :zero, "+ref(aDue)+" = :due",
		item{":pending": str(string(scangate.DeliveryPending)), ":zero": num(0), ":due": num(now.UnixMilli())},
		when("attribute_exists("+ref(aPK)+")"))
	t.check(lWebhook, webhookKey(webhookID), when("attribute_exists("+ref(aPK)+")"))
	s.addAudit(t, scangate.NewAudit(scangate.AuditWebhookRedeliver, who, webhookAudit(webhookID),
		scangate.Changes{"delivery": {To: eventID}, "status": {From: string(d.Status), To: string(scangate.DeliveryPending)}}, now))
	if err := s.commitRetried(ctx, "redeliver", t); err != nil {
		if failed(err, lWebhook) {
			return scangate.Delivery{}, scangate.Errorf(scangate.KindNotFound, "no webhook has the id %d", webhookID)
		}
		if failed(err, lDelivery) {
			return scangate.Delivery{}, scangate.Errorf(scangate.KindNotFound, "delivery %s expired", eventID)
		}
		return scangate.Delivery{}, err
	}
	d.Status, d.Attempts, d.Due = scangate.DeliveryPending, 0, now.UnixMilli()
	return d, nil
}

// DeliveriesPage reads a page of a webhook's deliveries, newest first.
func (s *Store) DeliveriesPage(ctx context.Context, webhookID int64, limit int, after map[string]string) (scangate.Page[scangate.Delivery], error) {
	q := pageQuery{pk: aPK, sk: aSK, value: destinationPK(scangate.Destination{Kind: scangate.DestWebhook, ID: webhookID}),
		prefix: "DELIVERY#", newest: true, strong: true}
	p, err := s.queryPage(ctx, "list deliveries", q, limit, after)
	if err != nil {
		return scangate.Page[scangate.Delivery]{}, err
	}
	return pageOf(q, p, deliveryFrom), nil
}
