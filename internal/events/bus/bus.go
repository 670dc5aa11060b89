// Package bus is the stack's own event bus on Amazon EventBridge: every
// event is put with source scangate, detail-type its type and detail its
// body. The dispatcher calls EventBridge's JSON protocol through
// internal/awsjson, not the SDK's EventBridge client (its initialisation, at
// every cold start, is about a third of the floor's).
package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/scangate/scangate/internal/awsjson"
	"github.com/scangate/scangate/internal/events/dispatch"
)

// EventBridge puts events on one bus.
type EventBridge struct {
	client *awsjson.Client
	name   string
}

// Open builds the bus from a function's environment: EVENT_BUS_NAME, and
// EVENTBRIDGE_ENDPOINT for a compatible server.
func Open(getenv func(string) string) (*EventBridge, error) {
	name := getenv("EVENT_BUS_NAME")
	if name == "" {
		return nil, errors.New("EVENT_BUS_NAME is not set")
	}
	client, err := awsjson.FromEnv(getenv, awsjson.EventBridge())
	if err != nil {
		return nil, err
	}
	return &EventBridge{client: client, name: name}, nil
}

// putEntry is one entry of PutEvents' request; Time in epoch seconds,
// as the JSON protocol writes timestamps.
type putEntry struct {
	EventBusName, Source, DetailType, Detail string
	Time                                     float64
}

// attempts is how many times entries that EventBridge did not take are
// put again before Put fails (the dispatcher's batch is then retried).
const attempts = 3

// Put puts entries (at most 10, as PutEvents takes), again for those
// EventBridge reports failed.
func (b *EventBridge) Put(ctx context.Context, entries []dispatch.Entry) error {
	todo := make([]putEntry, len(entries))
	for i, e := range entries {
		todo[i] = putEntry{EventBusName: b.name, Source: dispatch.Source, DetailType: e.Type, Detail: string(e.Detail),
			Time: float64(e.Time.UnixMilli()) / 1000}
	}
	for range attempts {
		var out struct {
			FailedEntryCount int
			Entries          []struct{ ErrorCode string }
		}
		if err := b.client.Call(ctx, "AWSEvents.PutEvents", struct{ Entries []putEntry }{todo}, &out); err != nil {
			return fmt.Errorf("put events: %w", err)
		}
		if out.FailedEntryCount == 0 {
			return nil
		}
		var again []putEntry
		for i, r := range out.Entries {
			if r.ErrorCode != "" && i < len(todo) {
				again = append(again, todo[i])
			}
		}
		todo = again
	}
	return fmt.Errorf("put events: %d entries refused %d times", len(todo), attempts)
}
