package trigger_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
	"github.com/scangate/scangate/pkg/trigger"
	"github.com/scangate/scangate/pkg/work"
)

// collect is a work queue that keeps what it is sent.
type collect struct {
	mu     sync.Mutex
	bodies []string
}

func (c *collect) Send(_ context.Context, bodies []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, bodies...)
	return nil
}

// sqsEvent is the event of one delivery of a message.
func sqsEvent(id, body string) events.SQSEvent {
	return events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: body, EventSource: "aws:sqs"}}}
}

// TestWorkStepsOnce: a change of 60 findings in 6 scans, with a store
// that fans out past 10 findings in steps of about 20, is dispatched as 4
// messages (3 ranges of 2 scans, and the last, open, range of the scans
// recorded after the plan: none). The first is handled by two workers at once, then
// delivered again after it is done; the others once. Every finding is
// judged by exactly one write (its version 1), every scan's counts by
// exactly one (count version 1), the redelivery writes nothing at all,
// the totals count each finding once, and check finds no drift.
func TestWorkStepsOnce(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	writes := 0 // TransactWriteItems, PutItem, UpdateItem, BatchWriteItem
	st := env.Recorder(t, func(op string, _ any) {
		switch op {
		case "TransactWriteItems", "PutItem", "UpdateItem", "BatchWriteItem":
			mu.Lock()
			writes++
			mu.Unlock()
		}
	}, store.WithReevaluation(10, 20))
	if _, err := st.BulkLoad(ctx, ddbtest.GroupScans(6, 10, "CVE-2021-44228"), scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	queue := &collect{}
	run := st.Runner(time.Now, queue)
	at := time.Now()
	_, it, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2021-44228",
		Active: true, Global: true}}, "", scangate.Who{RequestID: "test"}, at, run.LeaseFrom(at))
	if err != nil {
		t.Fatal(err)
	}
	if it, err = run.Continue(ctx, it); err != nil || it.Status != work.Running || !it.FanOut || it.Steps != 4 || len(queue.bodies) != 4 {
		t.Fatalf("dispatched: %+v %v, messages %v", it, err, queue.bodies)
	}
	worker := trigger.RunWork(st.Runner(time.Now, nil), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	deliver := func(id, body string) {
		resp, err := worker(ctx, sqsEvent(id, body))
		if err != nil || len(resp.BatchItemFailures) > 0 {
			t.Errorf("message %s: %+v %v", id, resp, err)
		}
	}
	var wg sync.WaitGroup
	for _, w := range []string{"a", "b"} { // two workers on one step
		wg.Go(func() { deliver("m0-"+w, queue.bodies[0]) })
	}
	wg.Wait()
	mu.Lock()
	before := writes
	mu.Unlock()
	deliver("m0-again", queue.bodies[0]) // redelivered once done
	if writes != before {
		t.Errorf("the redelivered message wrote %d times", writes-before)
	}
	for i, body := range queue.bodies[1:] {
		deliver(fmt.Sprint("m", i+1), body)
	}

	got, err := st.WorkItem(ctx, it.ID)
	if err != nil || got.Status != work.Complete || got.Totals["vulnerabilities_updated"] != 60 || got.Totals["findings"] != 60 {
		t.Errorf("the work: %+v %v", got, err)
	}
	// Each finding and each scan's counts written once.
	items, err := env.DB.Scan(ctx, &dynamodb.ScanInput{TableName: &env.Table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	findings := 0
	for _, it := range items.Items {
		sk := it["SK"].(*types.AttributeValueMemberS).Value
		switch {
		case len(sk) > 8 && sk[:8] == "FINDING#":
			findings++
			if v, _ := it["fv"].(*types.AttributeValueMemberN); v == nil || v.Value != "1" {
				t.Errorf("%v %s: judgement version %v; want 1", it["PK"], sk, it["fv"])
			}
		case sk == "SCAN":
			if v, _ := it["cver"].(*types.AttributeValueMemberN); v == nil || v.Value != "1" {
				t.Errorf("%v: count version %v; want 1", it["PK"], it["cver"])
			}
		}
	}
	if findings != 60 {
		t.Errorf("%d findings", findings)
	}
	if rep, err := st.Check(ctx); err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}
