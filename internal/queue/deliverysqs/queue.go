// Package deliverysqs is the delivery queues on Amazon SQS (the lanes of
// internal/queue/deliverylane), for the functions that queue deliveries: the dispatcher, the
// deliverer and the redeliver route. They call SQS's JSON protocol through
// internal/awsjson, not the SDK's SQS client (its initialisation, at every cold
// start, is about a fifth of the floor's).
package deliverysqs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/scangate/scangate/internal/awsjson"
	"github.com/scangate/scangate/internal/queue/deliverylane"
)

// SQS sends to and hides messages of the delivery queues.
type SQS struct {
	client *awsjson.Client
	urls   map[deliverylane.Lane]string
}

// Open builds the queues from a function's environment, as
// awsclient.DynamoDBFromEnv builds the DynamoDB client: DELIVERY_QUEUE_URL (the
// fast lane), RETRY_QUEUE_URL and, for the deliverer,
// DEAD_LETTER_QUEUE_URL; SQS_ENDPOINT, when set, is an SQS-compatible
// server.
func Open(getenv func(string) string) (*SQS, error) {
	q := &SQS{urls: map[deliverylane.Lane]string{}}
	for l, name := range map[deliverylane.Lane]string{deliverylane.Fast: "DELIVERY_QUEUE_URL", deliverylane.Retry: "RETRY_QUEUE_URL", deliverylane.Dead: "DEAD_LETTER_QUEUE_URL"} {
		if u := getenv(name); u != "" {
			q.urls[l] = u
		}
	}
	if q.urls[deliverylane.Fast] == "" || q.urls[deliverylane.Retry] == "" {
		return nil, errors.New("DELIVERY_QUEUE_URL and RETRY_QUEUE_URL must be set")
	}
	client, err := awsjson.FromEnv(getenv, awsjson.SQS())
	if err != nil {
		return nil, err
	}
	q.client = client
	return q, nil
}

func (q *SQS) url(l deliverylane.Lane) (string, error) {
	u, ok := q.urls[l]
	if !ok {
		return "", fmt.Errorf("no queue for the %s lane", l)
	}
	return u, nil
}

// seconds rounds d up to whole seconds within [0, limit].
func seconds(d, limit time.Duration) int32 {
	return int32(math.Ceil(min(max(d, 0), limit).Seconds()))
}

// sendMessage is SendMessage's request.
type sendMessage struct {
	QueueURL     string `json:"QueueUrl"`
	MessageBody  string
	DelaySeconds int32 `json:",omitempty"`
}

// changeVisibility is ChangeMessageVisibility's request.
type changeVisibility struct {
	QueueURL          string `json:"QueueUrl"`
	ReceiptHandle     string
	VisibilityTimeout int32
}

// Send sends a message to a lane, delayed by at most deliverylane.MaxDelay.
func (q *SQS) Send(ctx context.Context, l deliverylane.Lane, body string, delay time.Duration) error {
	u, err := q.url(l)
	if err != nil {
		return err
	}
	err = q.client.Call(ctx, "AmazonSQS.SendMessage", sendMessage{QueueURL: u, MessageBody: body,
		DelaySeconds: seconds(delay, deliverylane.MaxDelay)}, nil)
	if err != nil {
		return fmt.Errorf("send to the %s queue: %w", l, err)
	}
	return nil
}

// Hide sets a received message's visibility timeout (ChangeMessageVisibility).
func (q *SQS) Hide(ctx context.Context, l deliverylane.Lane, receipt string, d time.Duration) error {
	u, err := q.url(l)
	if err != nil {
		return err
	}
	err = q.client.Call(ctx, "AmazonSQS.ChangeMessageVisibility", changeVisibility{QueueURL: u, ReceiptHandle: receipt,
		VisibilityTimeout: seconds(d, deliverylane.MaxHide)}, nil)
	if err != nil {
		return fmt.Errorf("hide a message of the %s queue: %w", l, err)
	}
	return nil
}

// LaneOf names the lane whose queue has this ARN: the queue's name ends
// both its ARN and its URL.
func (q *SQS) LaneOf(arn string) (deliverylane.Lane, bool) {
	name := arn[strings.LastIndex(arn, ":")+1:]
	for l, u := range q.urls {
		if path.Base(u) == name {
			return l, true
		}
	}
	return "", false
}
