package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// The outbox: every event is an item written in the transaction of the
// change it tells of, as the audit entry is, so that there is no change
// without its event and no event without its change:
//
//	EVENT#<ulid> / EVENT   type, occurred_at, data (JSON), webhook, ttl
//
// Each event has a partition of its own (no hot partition however many
// events are written), and the table's stream is filtered to the INSERTs
// of keys that begin with EventPrefix, so the dispatcher is invoked for
// events only. The dispatcher marks an event dispatched once it has put it
// on the bus and created its deliveries (an update: a MODIFY, which the
// filter drops). Events expire through the table's TTL after
// DefaultEventRetention, so a delivery can be redelivered while its event
// is kept.

// EventPrefix begins the partition key of every event item: the stream's
// filter (template.yaml) keeps the INSERTs of these keys only.
const EventPrefix = "EVENT#"

// DefaultEventRetention is how long events are kept.
const DefaultEventRetention = 30 * 24 * time.Hour

// Attributes of event items.
const (
	aOccurredAt = "occurred_at"
	aData       = "data"
	aWebhook    = "webhook"
	aDispatched = "dispatched"
)

// lEvent labels the event of a transaction.
const lEvent = "event"

func eventKey(id string) item { return key(EventPrefix+id, "EVENT") }

// EventID is the id of the event whose item has the partition key pk, and
// false when pk is not an event's.
func EventID(pk string) (string, bool) {
	id, ok := strings.CutPrefix(pk, EventPrefix)
	return id, ok && id != ""
}

func eventItem(e scangate.Event) item {
	it := eventKey(e.ID)
	it[aID] = str(e.ID)
	it[aType] = str(e.Type)
	it[aOccurredAt] = str(e.OccurredAt.String())
	it[aData] = str(string(e.Data))
	if e.Webhook != 0 {
		it[aWebhook] = num(e.Webhook)
	}
	it[aTTL] = num(e.OccurredAt.Add(DefaultEventRetention).Unix())
	return it
}

func eventFrom(it item) scangate.Event {
	return scangate.Event{ID: getS(it, aID), Type: getS(it, aType), OccurredAt: getTime(it, aOccurredAt),
		Data: []byte(getS(it, aData)), Webhook: getN(it, aWebhook)}
}

// addEvent adds an event to a transaction under a fresh ULID of its time
// and returns it with its id. Like the audit entry's, an id taken already
// fails the transaction.
func (s *Store) addEvent(t *tx, e scangate.Event) scangate.Event { return putEvent(t, e) }

// putEvent is addEvent where no store is at hand (putPR).
func putEvent(t *tx, e scangate.Event) scangate.Event {
	e.ID = newULID(e.OccurredAt.Time)
	t.put(lEvent, eventItem(e), when("attribute_not_exists("+ref(aPK)+")"))
	return e
}

// StoredEvent is an event as the outbox holds it.
type StoredEvent struct {
	scangate.Event
	// Dispatched: the dispatcher has put it on the bus and created its
	// deliveries.
	Dispatched bool
}

// Events reads events by id (strongly consistent), in the order of ids;
// an id without an item (expired) is left out.
func (s *Store) Events(ctx context.Context, ids []string) ([]StoredEvent, error) {
	keys := make([]item, len(ids))
	for i, id := range ids {
		keys[i] = eventKey(id)
	}
	items, err := s.batchGetAll(ctx, "get events", keys)
	if err != nil {
		return nil, err
	}
	out := make([]StoredEvent, 0, len(items))
	for _, it := range inOrder(items, keys) {
		out = append(out, StoredEvent{Event: eventFrom(it), Dispatched: getBool(it, aDispatched, false)})
	}
	return out, nil
}

// MarkDispatched records that an event has been dispatched, so that a
// dispatcher run again over it (a retried stream batch) skips it.
func (s *Store) MarkDispatched(ctx context.Context, id string) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       eventKey(id),
		UpdateExpression:          aws.String("SET " + ref(aDispatched) + " = :true"),
		ConditionExpression:       aws.String("attribute_exists(" + ref(aPK) + ")"),
		ExpressionAttributeValues: item{":true": boolean(true)},
	})
	if err != nil && !conditionFailed(err) { // expired meanwhile: nothing to mark
		return dbErr("mark event dispatched", err)
	}
	return nil
}

// RecordEvent writes an event on its own and returns it with its id. The
// changes of the table write their events in their own transactions
// (addEvent); this is for an event that tells of no change of the table's,
// such as one an operator sends again, and for tests.
func (s *Store) RecordEvent(ctx context.Context, e scangate.Event) (scangate.Event, error) {
	e.ID = newULID(e.OccurredAt.Time)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: eventItem(e),
		ConditionExpression:      aws.String("attribute_not_exists(" + ref(aPK) + ")"),
		ExpressionAttributeNames: map[string]string{ref(aPK): aPK}})
	if err != nil {
		return scangate.Event{}, dbErr("record event", err)
	}
	return e, nil
}
