package localstack

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
// timeout), or after the time the function set with Hide
// (ChangeMessageVisibility); a message received MaxReceive times goes to
// the dead-letter queue instead (the queue's RedrivePolicy). A message
// sent with a delay (DelaySeconds) is visible after it. Times are those of
// the stack's clock (Options.Now). A queue that no function consumes (a
// dead-letter queue) keeps what it is sent.
type Queue struct {
	Name       string
	MaxReceive int    // 0: no dead-letter queue, a failing message is retried for ever
	DeadLetter *Queue // where a message goes after MaxReceive receives

	consumer    func(ctx context.Context, event []byte) ([]byte, error)
	batch       int
	concurrency int
	retry       time.Duration
	log         *slog.Logger
	now         func() time.Time

	watch   // guards and signals what follows
	seq     int
	ready   []*message           // waiting to be delivered, visible or not yet
	hidden  map[string]time.Time // by receipt handle: when a message in flight becomes visible if it fails
	pending int                  // messages in flight
}

type message struct {
	id, body  string
	receives  int
	sent      time.Time
	visibleAt time.Time
}

func newQueue(name string) *Queue {
	return &Queue{Name: name, watch: newWatch(), now: time.Now, hidden: map[string]time.Time{}}
}

// Send adds a message and returns its id.
func (q *Queue) Send(body string) string { return q.SendDelayed(body, 0) }

// SendDelayed adds a message visible after delay and returns its id.
func (q *Queue) SendDelayed(body string, delay time.Duration) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	now := q.now()
	m := &message{id: fmt.Sprintf("%s-%d", q.Name, q.seq), body: body, sent: now, visibleAt: now.Add(delay)}
	q.ready = append(q.ready, m)
	q.notify()
	return m.id
}

// Hide makes a message in flight, by its receipt handle, visible again
// only after d if it is not deleted (ChangeMessageVisibility).
func (q *Queue) Hide(receipt string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.hidden[receipt]; !ok {
		return fmt.Errorf("queue %s: no message in flight has the receipt handle %q", q.Name, receipt)
	}
	q.hidden[receipt] = q.now().Add(d)
	return nil
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

// Settled waits until no message is in flight and none is visible (a
// message delayed or hidden until later may wait), or ctx ends: what a
// test whose clock stands still waits for.
func (q *Queue) Settled(ctx context.Context) error {
	return q.until(ctx, func() bool { return q.pending == 0 && q.visible() == 0 })
}

// Sent is how many messages the queue was sent in all.
func (q *Queue) Sent() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.seq
}

// Waiting is how many messages wait to become visible.
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ready) - q.visible()
}

// visible counts the messages visible now; mu is held.
func (q *Queue) visible() int {
	n, now := 0, q.now()
	for _, m := range q.ready {
		if !m.visibleAt.After(now) {
			n++
		}
	}
	return n
}

// clockPoll is how often a queue whose messages wait for a later time
// looks at the clock again (a test's clock moves without a signal).
const clockPoll = 20 * time.Millisecond

// take waits for visible messages and takes a batch of them, or returns
// nil when ctx ends.
func (q *Queue) take(ctx context.Context) []*message {
	for {
		q.mu.Lock()
		now, changed := q.now(), q.changed
		var batch, rest []*message
		for _, m := range q.ready {
			if len(batch) < q.batch && !m.visibleAt.After(now) {
				batch = append(batch, m)
			} else {
				rest = append(rest, m)
			}
		}
		if len(batch) > 0 {
			q.ready, q.pending = rest, q.pending+len(batch)
			for _, m := range batch {
				m.receives++
				q.hidden[receipt(m)] = time.Time{}
			}
			q.mu.Unlock()
			return batch
		}
		waiting := len(q.ready) > 0
		q.mu.Unlock()
		var tick <-chan time.Time
		if waiting {
			tick = time.After(clockPoll)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick:
		}
	}
}

func receipt(m *message) string { return m.id + "#" + strconv.Itoa(m.receives) }

// run delivers batches to the consumer until ctx ends.
func (q *Queue) run(ctx context.Context, wg *sync.WaitGroup) {
	slots := make(chan struct{}, q.concurrency)
	for {
		select {
		case <-ctx.Done():
			return
		case slots <- struct{}{}:
		}
		batch := q.take(ctx)
		if batch == nil {
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			q.settle(batch, q.deliver(ctx, batch))
		})
	}
}

// deliver invokes the consumer with a batch and returns the messages that
// failed.
func (q *Queue) deliver(ctx context.Context, batch []*message) []*message {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(batch))}
	for i, m := range batch {
		sum := md5.Sum([]byte(m.body)) // SQS's MD5OfBody, a checksum the event carries
		ev.Records[i] = events.SQSMessage{MessageId: m.id, ReceiptHandle: receipt(m), Body: m.body,
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

// settle ends a delivered batch: the failed messages go to the
// dead-letter queue after MaxReceive receives, or become visible again
// after the retry delay or when Hide said; the others are deleted.
func (q *Queue) settle(batch, failed []*message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, m := range failed {
		if q.MaxReceive > 0 && m.receives >= q.MaxReceive && q.DeadLetter != nil {
			q.DeadLetter.Send(m.body)
			continue
		}
		m.visibleAt = now.Add(q.retry)
		if at := q.hidden[receipt(m)]; !at.IsZero() {
			m.visibleAt = at
		}
		q.ready = append(q.ready, m)
	}
	for _, m := range batch {
		delete(q.hidden, receipt(m))
	}
	q.pending -= len(batch)
	q.notify()
}
