// Package deliverysqs is the delivery queues on Amazon SQS (the lanes of
// internal/queue/deliverylane), for the functions that queue deliveries: the dispatcher, the
// deliverer and the redeliver route. Only they link the SQS client.
package deliverysqs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/store"
)

// SQS sends to and hides messages of the delivery queues.
type SQS struct {
	client *sqs.Client
	urls   map[deliverylane.Lane]string
}

// Open builds the queues from a function's environment, as
// store.ClientFromEnv builds the DynamoDB client: DELIVERY_QUEUE_URL (the
// fast lane), RETRY_QUEUE_URL and, for the deliverer,
// DEAD_LETTER_QUEUE_URL; SQS_ENDPOINT, when set, is an SQS-compatible
// server.
func Open(getenv func(string) string, optFns ...func(*sqs.Options)) (*SQS, error) {
	q := &SQS{urls: map[deliverylane.Lane]string{}}
	for l, name := range map[deliverylane.Lane]string{deliverylane.Fast: "DELIVERY_QUEUE_URL", deliverylane.Retry: "RETRY_QUEUE_URL", deliverylane.Dead: "DEAD_LETTER_QUEUE_URL"} {
		if u := getenv(name); u != "" {
			q.urls[l] = u
		}
	}
	if q.urls[deliverylane.Fast] == "" || q.urls[deliverylane.Retry] == "" {
		return nil, errors.New("DELIVERY_QUEUE_URL and RETRY_QUEUE_URL must be set")
	}
	client, err := Client(getenv, optFns...)
	if err != nil {
		return nil, err
	}
	q.client = client
	return q, nil
}

// Client is the SQS client of a function's environment, built as
// store.ClientFromEnv builds the DynamoDB client: SQS_ENDPOINT, when set,
// is an SQS-compatible server.
func Client(getenv func(string) string, optFns ...func(*sqs.Options)) (*sqs.Client, error) {
	endpoint := getenv("SQS_ENDPOINT")
	region, creds, err := store.FromEnv(getenv, endpoint, "sqs")
	if err != nil {
		return nil, err
	}
	opts := sqs.Options{Region: region, Credentials: creds, Retryer: store.NewRetryer(), HTTPClient: store.NewHTTPClient()}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
	}
	return sqs.New(opts, optFns...), nil
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

// Send sends a message to a lane, delayed by at most lane.MaxDelay.
func (q *SQS) Send(ctx context.Context, l deliverylane.Lane, body string, delay time.Duration) error {
	u, err := q.url(l)
	if err != nil {
		return err
	}
	_, err = q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: &body,
		DelaySeconds: seconds(delay, deliverylane.MaxDelay)})
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
	_, err = q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &u, ReceiptHandle: &receipt,
		VisibilityTimeout: seconds(d, deliverylane.MaxHide)})
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
