// Package worksqs is the queue of durable work on Amazon SQS: the steps of
// a dispatched work item (internal/queue/work), sent by the functions that start or
// resume work (the allowlist changes, the scheduled function) and read by
// the queue function that runs them. Only those functions link the SQS
// client.
package worksqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/scangate/scangate/internal/queue/deliverysqs"
)

// batchMax is the most messages of one SendMessageBatch.
const batchMax = 10

// SQS sends work messages to the work queue (work.Sender).
type SQS struct {
	client *sqs.Client
	url    string
}

// Open builds the work queue from a function's environment:
// WORK_QUEUE_URL, and the client as queue.Client builds it.
func Open(getenv func(string) string, optFns ...func(*sqs.Options)) (*SQS, error) {
	url := getenv("WORK_QUEUE_URL")
	if url == "" {
		return nil, errors.New("WORK_QUEUE_URL is not set")
	}
	client, err := deliverysqs.Client(getenv, optFns...)
	if err != nil {
		return nil, err
	}
	return &SQS{client: client, url: url}, nil
}

// Send sends the messages, batchMax a request, sending again those SQS
// reports failed in a batch.
func (q *SQS) Send(ctx context.Context, bodies []string) error {
	for start := 0; start < len(bodies); start += batchMax {
		batch := bodies[start:min(start+batchMax, len(bodies))]
		for attempt := 0; len(batch) > 0; attempt++ {
			entries := make([]types.SendMessageBatchRequestEntry, len(batch))
			for i, b := range batch {
				entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(b)}
			}
			out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
			if err != nil {
				return fmt.Errorf("send to the work queue: %w", err)
			}
			if len(out.Failed) > 0 && attempt == 2 {
				return fmt.Errorf("send to the work queue: %d messages failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
			}
			var again []string
			for _, f := range out.Failed {
				i, _ := strconv.Atoi(aws.ToString(f.Id))
				again = append(again, batch[i])
			}
			batch = again
		}
	}
	return nil
}
