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
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
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
	st := env.RecorderWith(t, func(op string, _ any) {
		switch op {
		case "TransactWriteItems", "PutItem", "UpdateItem", "BatchWriteItem":
			mu.Lock()
			writes++
			mu.Unlock()
		}
	}, []store.Option{store.WithReevaluation(10, 20)})
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

// TestSupersededWorkCountsOnly: an allowlist's creation and, before its
// work has run, its deactivation each dispatch their work. The first
// work, run after the second change, finds the group moved past its
// version: it writes nothing, yet counts exactly what its own change
// judged differently (30 findings); the second judges every finding by
// the group's current rules. Then the first runs again (a redelivery)
// and still writes nothing.
func TestSupersededWorkCountsOnly(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	txs := 0
	st := env.RecorderWith(t, func(op string, _ any) {
		if op == "TransactWriteItems" {
			mu.Lock()
			txs++
			mu.Unlock()
		}
	}, []store.Option{store.WithReevaluation(0, 100)})
	if _, err := st.BulkLoad(ctx, ddbtest.GroupScans(3, 10, "CVE-2021-44228"), scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	queue := &collect{}
	run := st.Runner(time.Now, queue)
	who := scangate.Who{RequestID: "test"}
	a, first, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2021-44228",
		Active: true, Global: true}}, "", who, time.Now(), run.LeaseFrom(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if first, err = run.Continue(ctx, first); err != nil {
		t.Fatal(err)
	}
	_, second, err := st.UpdateAllowlist(ctx, a.ID, scangate.AllowlistChange{Active: new(bool)}, who, time.Now(), run.LeaseFrom(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if second, err = run.Continue(ctx, second); err != nil {
		t.Fatal(err)
	}
	worker := st.Runner(time.Now, nil)
	handle := func(it work.Item) {
		for n := range it.Steps {
			if err := worker.Handle(ctx, work.Message(it.ID, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	before := txs
	mu.Unlock()
	handle(first)
	if txs != before {
		t.Errorf("the superseded work wrote %d transactions", txs-before)
	}
	got, err := st.WorkItem(ctx, first.ID)
	if err != nil || got.Status != work.Complete || got.Totals["vulnerabilities_updated"] != 30 {
		t.Errorf("the superseded work: %+v %v", got, err)
	}
	handle(second)
	before = txs
	handle(first)
	if txs != before {
		t.Errorf("the superseded work, delivered again, wrote %d transactions", txs-before)
	}
	if got, err = st.WorkItem(ctx, second.ID); err != nil || got.Status != work.Complete || got.Totals["vulnerabilities_updated"] != 30 {
		t.Errorf("the newer work: %+v %v", got, err)
	}
	for id := int64(1); id <= 3; id++ {
		if sc, _, err := st.Scan(ctx, id); err != nil || sc.VulnerabilityCount != 10 {
			t.Errorf("scan %d: %d findings unsuppressed, %v; the allowlist is inactive", id, sc.VulnerabilityCount, err)
		}
	}
	if rep, err := st.Check(ctx); err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}
