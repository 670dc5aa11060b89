// Package bus is the stack's own event bus on Amazon EventBridge: every
// event is put with source scangate, detail-type its type and detail its
// body. Only the dispatcher links the EventBridge client.
package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/store"
)

// EventBridge puts events on one bus.
type EventBridge struct {
	client *eventbridge.Client
	name   string
}

// Open builds the bus from a function's environment: EVENT_BUS_NAME, and
// EVENTBRIDGE_ENDPOINT for a compatible server.
func Open(getenv func(string) string, optFns ...func(*eventbridge.Options)) (*EventBridge, error) {
	name := getenv("EVENT_BUS_NAME")
	if name == "" {
		return nil, errors.New("EVENT_BUS_NAME is not set")
	}
	endpoint := getenv("EVENTBRIDGE_ENDPOINT")
	region, creds, err := store.FromEnv(getenv, endpoint, "events")
	if err != nil {
		return nil, err
	}
	opts := eventbridge.Options{Region: region, Credentials: creds, Retryer: store.NewRetryer(), HTTPClient: store.NewHTTPClient()}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
	}
	return &EventBridge{client: eventbridge.New(opts, optFns...), name: name}, nil
}

// attempts is how many times entries that EventBridge did not take are
// put again before Put fails (the dispatcher's batch is then retried).
const attempts = 3

// Put puts entries (at most 10, as PutEvents takes), again for those
// EventBridge reports failed.
func (b *EventBridge) Put(ctx context.Context, entries []dispatch.Entry) error {
	todo := make([]types.PutEventsRequestEntry, len(entries))
	for i, e := range entries {
		todo[i] = types.PutEventsRequestEntry{EventBusName: &b.name, Source: aws.String(dispatch.Source),
			DetailType: aws.String(e.Type), Detail: aws.String(string(e.Detail)), Time: aws.Time(e.Time)}
	}
	for range attempts {
		out, err := b.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: todo})
		if err != nil {
			return fmt.Errorf("put events: %w", err)
		}
		if out.FailedEntryCount == 0 {
			return nil
		}
		var again []types.PutEventsRequestEntry
		for i, r := range out.Entries {
			if r.ErrorCode != nil && i < len(todo) {
				again = append(again, todo[i])
			}
		}
		todo = again
	}
	return fmt.Errorf("put events: %d entries refused %d times", len(todo), attempts)
}
