package local

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Queue is an SQS queue as the local stack runs it. The messages sent to
// it are delivered to the function that an SQS event of the template
// names, as Lambda's event source mapping delivers them: in batches of at
// most the event's BatchSize (an events.SQSEvent), several batches at
// once. The messages the function's partial batch response names
// (events.SQSEventResponse), or all those of a batch whose invocation
// failed, become visible again after the retry delay (SQS's visibility
// timeout); a message received MaxReceive times goes to the dead-letter
// queue instead (the queue's RedrivePolicy). A queue that no function
// consumes (a dead-letter queue) keeps what it is sent.
type Queue struct {
	Name       string
	MaxReceive int    // 0: no dead-letter queue, a failing message is retried for ever
	DeadLetter *Queue // where a message goes after MaxReceive receives

	consumer    func(ctx context.Context, event []byte) ([]byte, error)
	batch       int
	concurrency int
	retry       time.Duration
	log         *slog.Logger

	watch   // guards and signals what follows
	seq     int
	ready   []*message
	pending int // messages in flight or waiting to be visible again
}

type message struct {
	id, body string
	receives int
	sent     time.Time
}

func newQueue(name string) *Queue { return &Queue{Name: name, watch: newWatch()} }

// Send adds a message and returns its id.
func (q *Queue) Send(body string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	m := &message{id: fmt.Sprintf("%s-%d", q.Name, q.seq), body: body, sent: time.Now()}
	q.ready = append(q.ready, m)
	q.notify()
	return m.id
}

// Messages returns the bodies of the messages the queue holds and has not
// handed out: all a dead-letter queue was sent.
func (q *Queue) Messages() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, len(q.ready))
	for i, m := range q.ready {
		out[i] = m.body
	}
	return out
}

// Idle waits until a consumed queue holds no message, in flight or to be
// delivered again, or ctx ends.
func (q *Queue) Idle(ctx context.Context) error {
	return q.until(ctx, func() bool { return len(q.ready) == 0 && q.pending == 0 })
}

// run delivers batches to the consumer until ctx ends.
func (q *Queue) run(ctx context.Context, wg *sync.WaitGroup) {
	slots := make(chan struct{}, q.concurrency)
	for {
		select {
		case <-ctx.Done():
			return
		case slots <- struct{}{}:
		}
		if q.until(ctx, func() bool { return len(q.ready) > 0 }) != nil {
			return
		}
		q.mu.Lock()
		n := min(len(q.ready), q.batch)
		batch := q.ready[:n:n]
		q.ready = q.ready[n:]
		q.pending += n
		q.mu.Unlock()
		wg.Go(func() {
			defer func() { <-slots }()
			q.settle(ctx, batch, q.deliver(ctx, batch))
		})
	}
}

// deliver invokes the consumer with a batch and returns the messages that
// failed.
func (q *Queue) deliver(ctx context.Context, batch []*message) []*message {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(batch))}
	for i, m := range batch {
		m.receives++
		sum := md5.Sum([]byte(m.body)) // SQS's MD5OfBody, a checksum the event carries
		ev.Records[i] = events.SQSMessage{MessageId: m.id, ReceiptHandle: m.id + "#" + strconv.Itoa(m.receives), Body: m.body,
			Md5OfBody: hex.EncodeToString(sum[:]), EventSource: "aws:sqs", AWSRegion: region,
			EventSourceARN: "arn:aws:sqs:" + region + ":" + account + ":" + q.Name,
			Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.receives), "SenderId": account,
				"SentTimestamp": strconv.FormatInt(m.sent.UnixMilli(), 10)}}
	}
	b, _ := json.Marshal(ev)
	out, err := q.consumer(ctx, b)
	if err != nil {
		q.log.ErrorContext(ctx, "SQS batch invocation failed", "queue", q.Name, "messages", len(batch), "error", err.Error())
		return batch
	}
	var resp events.SQSEventResponse
	if len(out) > 0 && string(out) != "null" {
		if err := json.Unmarshal(out, &resp); err != nil {
			q.log.ErrorContext(ctx, "SQS batch response unreadable", "queue", q.Name, "error", err.Error())
			return batch
		}
	}
	var failed []*message
	for _, f := range resp.BatchItemFailures {
		i := slices.IndexFunc(batch, func(m *message) bool { return m.id == f.ItemIdentifier })
		if i < 0 { // as Lambda: an unknown identifier fails the whole batch
			return batch
		}
		failed = append(failed, batch[i])
	}
	return failed
}

// settle ends a delivered batch: the failed messages go to the dead-letter
// queue after MaxReceive receives, or become visible again after the retry
// delay; the others are deleted.
func (q *Queue) settle(ctx context.Context, batch, failed []*message) {
	var again []*message
	for _, m := range failed {
		if q.MaxReceive > 0 && m.receives >= q.MaxReceive && q.DeadLetter != nil {
			q.DeadLetter.Send(m.body)
			continue
		}
		again = append(again, m)
	}
	if len(again) > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(q.retry):
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending -= len(batch)
	q.ready = append(q.ready, again...)
	q.notify()
}
