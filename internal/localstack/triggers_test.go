package localstack_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/trigger"
)

// testResources are what a function of each of the Queue and Stream kinds
// adds to template.yaml: a queue with its dead-letter queue, and the
// functions with their SQS and DynamoDB events.
const testResources = `
  TestWorkQueue:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy:
        deadLetterTargetArn: !GetAtt TestDeadLetterQueue.Arn
        maxReceiveCount: 3
  TestDeadLetterQueue:
    Type: AWS::SQS::Queue
  TestQueueWorkerFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Work:
          Type: SQS
          Properties:
            Queue: !GetAtt TestWorkQueue.Arn
            BatchSize: 4
            FunctionResponseTypes: [ReportBatchItemFailures]
  TestStreamReaderFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Changes:
          Type: DynamoDB
          Properties:
            Stream: !GetAtt Table.StreamArn
            StartingPosition: TRIM_HORIZON
            BatchSize: 2
            FunctionResponseTypes: [ReportBatchItemFailures]
            FilterCriteria:
              Filters:
                - Pattern: '{"dynamodb":{"NewImage":{"SK":{"S":["USER"]}}}}'
`

// TestQueueAndStreamTriggers: an operation of the Queue kind and one of the
// Stream kind, each a table entry and a template resource and nothing else,
// are invoked by the local stack as Lambda would. The queue's consumer gets
// batches of at most 4 messages; a message its partial batch response
// names is delivered again, one that keeps failing goes to the dead-letter
// queue after 3 receives, a failed invocation delivers its whole batch
// again, and the others are delivered once. The stream's reader gets the
// user records the stack's store writes (its filter drops every other
// item), in order, in batches of at most 2, and after a partial failure
// the batch starts again at the record that failed.
func TestQueueAndStreamTriggers(t *testing.T) {
	t.Parallel()
	tpl, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(tpl), "\nResources:\n", "\nResources:"+testResources, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	received := map[string]int{} // message body: deliveries
	var batches []int            // sizes of the queue's batches
	crashed := false
	worker := func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, len(ev.Records))
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			received[m.Body]++
			if m.Body == "crash-once" && !crashed {
				crashed = true
				return resp, errors.New("the worker crashed")
			}
			if m.Body == "fail-always" || m.Body == "fail-once" && m.Attributes["ApproximateReceiveCount"] == "1" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	}
	var read []string // the stream records the reader processed, by key
	failed := false
	reader := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		var resp events.DynamoDBEventResponse
		if len(ev.Records) > 2 {
			t.Errorf("a stream batch of %d records", len(ev.Records))
		}
		for _, r := range ev.Records {
			pk := r.Change.NewImage["PK"].String()
			read = append(read, pk)
			if pk == "USER#3" && !failed {
				failed = true
				resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}
				return resp, nil
			}
		}
		return resp, nil
	}
	env := ddbtest.New(t)
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: path, Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), RedeliverAfter: time.Millisecond,
		Operations: []ops.Operation{
			{Name: "test-queue-worker", Queue: func(ops.Deps) trigger.QueueHandler { return worker }},
			{Name: "test-stream-reader", Stream: func(ops.Deps) trigger.StreamHandler { return reader }},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a hang, not a timing
	defer cancel()

	q := stack.Queue("TestWorkQueue")
	for _, body := range []string{"ok-1", "fail-once", "ok-2", "fail-always", "ok-3", "ok-4"} {
		q.Send(body)
	}
	if err := q.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	q.Send("crash-once")
	if err := q.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"ok-1": 1, "ok-2": 1, "ok-3": 1, "ok-4": 1, "fail-once": 2, "fail-always": 3, "crash-once": 2}
	mu.Lock()
	if !sameCounts(received, want) || slices.Max(batches) > 4 {
		t.Errorf("deliveries %v in batches of %v; want %v in batches of at most 4", received, batches, want)
	}
	mu.Unlock()
	if dead := stack.Queue("TestDeadLetterQueue").Messages(); !slices.Equal(dead, []string{"fail-always"}) {
		t.Errorf("dead-letter queue %v; want [fail-always]", dead)
	}

	for _, name := range []string{"ann", "bob", "cid"} {
		at := scangate.At(time.Now())
		if _, err := stack.Store.CreateUser(ctx, scangate.User{Username: name, Email: name + "@example.com", Role: scangate.RoleUser,
			Active: true, PasswordHash: "x", CreatedAt: at, UpdatedAt: at}, scangate.Who{RequestID: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := stack.Stream("TestStreamReaderFunction").Idle(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"USER#1", "USER#2", "USER#3", "USER#3", "USER#4"}; !slices.Equal(read, want) {
		t.Errorf("the stream's reader processed %v; want %v", read, want)
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
