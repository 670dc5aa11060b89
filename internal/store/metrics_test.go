package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// emitted collects the EMF lines a test's emitter writes.
type emitted struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (e *emitted) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.b.Write(p)
}

// lines are the metric lines written, each checked against the format.
func (e *emitted) lines(t *testing.T) []map[string]any {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(e.b.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if err := metrics.Check(l); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// sum adds the values of metric name over the lines whose dimensions
// include dims.
func sum(lines []map[string]any, name string, dims map[string]string) float64 {
	var n float64
next:
	for _, l := range lines {
		v, ok := l[name].(float64)
		if !ok {
			continue
		}
		for k, want := range dims {
			if l[k] != want {
				continue next
			}
		}
		n += v
	}
	return n
}

func newEmitter() (*emitted, *metrics.Emitter) {
	var e emitted
	return &e, metrics.New(slog.New(slog.NewJSONHandler(&e, nil)))
}

// TestStoreMetrics: a recorded scan emits, once it is committed, the gate
// it wrote (by cause and decision) and the scans and unsuppressed
// findings it recorded; the sweep of durable work emits the backlog.
func TestStoreMetrics(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	out, m := newEmitter()
	st := store.New(env.DB, env.Table, store.WithMetrics(m))
	ctx := context.Background()
	ns := ddbtest.GroupScans(1, 3, "CVE-2026-1")[0]
	if _, _, err := st.RecordScan(ctx, ns, scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	lines := out.lines(t)
	if n := sum(lines, metrics.GateDecisions, map[string]string{metrics.DimCause: scangate.CauseScan, metrics.DimBlocked: "true"}); n != 1 {
		t.Errorf("%v blocked gates of cause scan, want 1: %v", n, lines)
	}
	if s, f := sum(lines, metrics.ScansRecorded, nil), sum(lines, metrics.FindingsRecorded, nil); s != 1 || f != 3 {
		t.Errorf("%v scans and %v findings recorded, want 1 and 3", s, f)
	}
	// Without a base every finding is new.
	if n := sum(lines, metrics.NewFindings, nil); n != 3 {
		t.Errorf("%v new findings recorded, want 3", n)
	}

	// The same recording again under its idempotency key commits
	// nothing and emits nothing.
	if _, _, _, err := st.RecordScans(ctx, []scangate.NewScan{ns}, scangate.Who{RequestID: "test"}, time.Now(), "key-1"); err != nil {
		t.Fatal(err)
	}
	before := len(out.lines(t))
	if _, _, _, err := st.RecordScans(ctx, []scangate.NewScan{ns}, scangate.Who{RequestID: "test"}, time.Now(), "key-1"); err != nil {
		t.Fatal(err)
	}
	if after := len(out.lines(t)); after != before {
		t.Errorf("a repeated recording emitted %d lines", after-before)
	}

	created := time.Now()
	if _, _, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2026-1", Active: true, Global: true}, Reason: "used_in_tests"},
		"", scangate.Who{RequestID: "test"}, created, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DueWork(ctx, created.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	lines = out.lines(t)
	last := lines[len(lines)-1]
	if pending, _ := last[metrics.WorkPending].(float64); pending != 1 || last[metrics.DimKind] == nil {
		t.Errorf("backlog by kind %v, want 1 item pending", last)
	}
	var total map[string]any
	for _, l := range lines {
		if _, ok := l[metrics.WorkPending]; ok && l[metrics.DimKind] == nil {
			total = l
		}
	}
	if age, _ := total[metrics.WorkOldestAge].(float64); total[metrics.WorkPending] != 1.0 || age < 19*60 || age > 21*60 {
		t.Errorf("total backlog %v, want 1 item 20 minutes old", total)
	}
}

// TestThrottlesCounted: every attempt DynamoDB throttles is one
// DynamoDBThrottles of its operation, retried ones included; other
// failures count none.
func TestThrottlesCounted(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	out, m := newEmitter()
	db := dynamodb.New(env.DB.Options(), store.CountThrottles(m))
	st := store.New(db, env.Table)
	var mu sync.Mutex
	answers := []error{ddbtest.Throttled(), ddbtest.Throttled(), ddbtest.InternalServerError()}
	f := func(op string, _ any) error {
		mu.Lock()
		defer mu.Unlock()
		if op != "GetItem" || len(answers) == 0 {
			return nil
		}
		a := answers[0]
		answers = answers[1:]
		return a
	}
	env.Fault.Store(&f)
	if _, err := st.User(context.Background(), 1); err != nil && scangate.KindOf(err) != scangate.KindNotFound {
		t.Fatalf("the fourth attempt should answer: %v", err)
	}
	lines := out.lines(t)
	if n := sum(lines, metrics.DynamoDBThrottle, map[string]string{metrics.DimOperation: "GetItem"}); n != 2 || len(lines) != 2 {
		t.Errorf("%v throttles of GetItem in %d lines, want 2: %v", n, len(lines), lines)
	}
}
