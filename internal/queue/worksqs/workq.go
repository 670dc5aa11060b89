// Package worksqs is the queue of durable work on Amazon SQS: the steps of
// a dispatched work item (internal/queue/work), sent by the functions that start or
// resume work (the allowlist changes, the scheduled function) and read by
// the queue function that runs them. They call SQS's JSON protocol through
// internal/awsjson, not the SDK's SQS client (its initialisation, at every cold
// start, is about a fifth of the floor's).
package worksqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/scangate/scangate/internal/awsjson"
)

// batchMax is the most messages of one SendMessageBatch.
const batchMax = 10

// SQS sends work messages to the work queue (work.Sender).
type SQS struct {
	client *awsjson.Client
	url    string
}

// Open builds the work queue from a function's environment:
// WORK_QUEUE_URL, and SQS_ENDPOINT for an SQS-compatible server.
func Open(getenv func(string) string) (*SQS, error) {
	url := getenv("WORK_QUEUE_URL")
	if url == "" {
		return nil, errors.New("WORK_QUEUE_URL is not set")
	}
	client, err := awsjson.FromEnv(getenv, awsjson.SQS())
	if err != nil {
		return nil, err
	}
	return &SQS{client: client, url: url}, nil
}

// sendBatch is SendMessageBatch's request.
type sendBatch struct {
	QueueURL string `json:"QueueUrl"`
	Entries  []batchEntry
}

type batchEntry struct {
	ID          string `json:"Id"`
	MessageBody string
}

// Send sends the messages, batchMax a request, sending again those SQS
// reports failed in a batch.
func (q *SQS) Send(ctx context.Context, bodies []string) error {
	for start := 0; start < len(bodies); start += batchMax {
		batch := bodies[start:min(start+batchMax, len(bodies))]
		for attempt := 0; len(batch) > 0; attempt++ {
			in := sendBatch{QueueURL: q.url, Entries: make([]batchEntry, len(batch))}
			for i, b := range batch {
				in.Entries[i] = batchEntry{ID: strconv.Itoa(i), MessageBody: b}
			}
			var out struct {
				Failed []struct{ ID, Message string } `json:"Failed"`
			}
			if err := q.client.Call(ctx, "AmazonSQS.SendMessageBatch", in, &out); err != nil {
				return fmt.Errorf("send to the work queue: %w", err)
			}
			if len(out.Failed) > 0 && attempt == 2 {
				return fmt.Errorf("send to the work queue: %d messages failed: %s", len(out.Failed), out.Failed[0].Message)
			}
			var again []string
			for _, f := range out.Failed {
				if i, err := strconv.Atoi(f.ID); err == nil && i < len(batch) {
					again = append(again, batch[i])
				}
			}
			batch = again
		}
	}
	return nil
}
