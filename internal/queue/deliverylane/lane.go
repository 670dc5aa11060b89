// Package deliverylane names the queues of deliveries and what their messages
// carry, for the functions that queue deliveries (the dispatcher, the
// deliverer, the redeliver route) without linking a queue's client: SQS
// is internal/queue/deliverysqs, the local stack's queues internal/localstack.
//
// Two lanes keep one destination's trouble from delaying another's
// deliveries: first attempts to healthy destinations go to the fast lane;
// retries, and every delivery to a webhook in a streak of failures, go to
// the retry lane, whose concurrency is capped apart.
package deliverylane

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// Lane names a queue of deliveries.
type Lane string

// The lanes.
const (
	// Fast: first attempts to destinations not known to be failing.
	Fast Lane = "fast"
	// Retry: attempts after a failure, and deliveries to webhooks in a
	// failure streak.
	Retry Lane = "retry"
	// Dead: deliveries whose attempts ran out (the dead-letter queue).
	Dead Lane = "dead"
)

// MaxDelay is the longest delay SQS gives a message it is sent; MaxHide
// the longest it hides a received one (from when it was received).
const (
	MaxDelay = 15 * time.Minute
	MaxHide  = 12 * time.Hour
)

// Queues sends and hides delivery messages.
type Queues interface {
	// Send sends a message to a lane, visible after delay (at most
	// MaxDelay).
	Send(ctx context.Context, l Lane, body string, delay time.Duration) error
	// Hide makes a received message of a lane visible again only after d
	// (at most MaxHide): ChangeMessageVisibility.
	Hide(ctx context.Context, l Lane, receipt string, d time.Duration) error
	// LaneOf names the lane of a queue by its ARN (an SQS record's
	// EventSourceARN).
	LaneOf(arn string) (Lane, bool)
}

// message is what a queue message carries: which delivery.
type message struct {
	Kind  string `json:"kind"` // scangate.DestWebhook or scangate.DestIntegration
	ID    int64  `json:"id"`   // the webhook's id, or the vc_id
	Event string `json:"event"`
}

// Message is the body of the message of a delivery.
func Message(to scangate.Destination, eventID string) string {
	b, _ := json.Marshal(message{Kind: to.Kind, ID: to.ID, Event: eventID}) // plain values
	return string(b)
}

// Read reads the delivery a message names.
func Read(body string) (scangate.Destination, string, error) {
	var m message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return scangate.Destination{}, "", fmt.Errorf("delivery message: %w", err)
	}
	if m.Kind != scangate.DestWebhook && m.Kind != scangate.DestIntegration || m.ID < 1 || m.Event == "" {
		return scangate.Destination{}, "", fmt.Errorf("delivery message names no delivery: %.200s", body)
	}
	return scangate.Destination{Kind: m.Kind, ID: m.ID}, m.Event, nil
}
