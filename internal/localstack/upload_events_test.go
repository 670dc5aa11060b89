package localstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
)

// runsLog is a SARIF log of one run a tool, each with n[i] results:
// gitleaks' are secrets, the others' vulnerabilities; every tool is a
// category of its own.
func runsLog(tools []string, n []int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":"2.1.0","runs":[`)
	for k, tool := range tools {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"tool":{"driver":{"name":%q}},"results":[`, tool)
		for i := range n[k] {
			if i > 0 {
				b.WriteByte(',')
			}
			if tool == "gitleaks" {
				fmt.Fprintf(&b, `{"ruleId":"generic-api-key","message":{"text":"secret"},"locations":[{"physicalLocation":`+
					`{"artifactLocation":{"uri":"src/s%d.go"},"region":{"startLine":%d,"snippet":{"text":"value-%d"}}}}]}`, i, i+1, i)
				continue
			}
			fmt.Fprintf(&b, `{"ruleId":"CVE-2099-%d%04d","message":{"text":"vulnerable"},"locations":[{"physicalLocation":`+
				`{"artifactLocation":{"uri":"go.sum"},"region":{"startLine":%d}}}]}`, k, i, i+1)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// outboxEvents are the data of the table's events, by type.
func outboxEvents(t *testing.T, env *ddbtest.Env) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, it := range env.Outbox(t) {
		typ := it["type"].(*types.AttributeValueMemberS).Value
		out[typ] = append(out[typ], it["data"].(*types.AttributeValueMemberS).Value)
	}
	return out
}

// findingWrites fails the writes of findings (BatchWriteItems that put
// into a scan's partition) after the first after of them, and their deletes too when
// deletes is set, as DynamoDB unavailable beyond the SDK's retries; commits
// fails every recording's commit (a transaction that puts a scan).
func findingWrites(after int64, deletes, commits bool) func(string, any) error {
	var puts atomic.Int64
	return func(_ string, in any) error {
		switch in := in.(type) {
		case *dynamodb.BatchWriteItemInput:
			for _, reqs := range in.RequestItems {
				for _, r := range reqs {
					switch {
					case r.PutRequest != nil && strings.HasPrefix(r.PutRequest.Item["PK"].(*types.AttributeValueMemberS).Value, "SCAN#"):
						if puts.Add(1) > after {
							return ddbtest.InternalServerError()
						}
						return nil // one batch of findings
					case r.DeleteRequest != nil && deletes:
						return ddbtest.InternalServerError()
					}
				}
			}
		case *dynamodb.TransactWriteItemsInput:
			for _, ti := range in.TransactItems {
				if commits && ti.Put != nil && strings.HasPrefix(ti.Put.Item["PK"].(*types.AttributeValueMemberS).Value, "SCAN#") {
					return ddbtest.InternalServerError()
				}
			}
		}
		return nil
	}
}

// TestUploadEventsOnce: an S3 upload of several runs leaves one
// scan.recorded per scan it records, one pr.gate_changed when it changes
// the PR's gate (none when it does not) and one upload.completed, however
// its deliveries fail before: a delivery whose writes of findings fail
// midway, one that dies leaving its findings (it could delete none), one
// whose commit fails, leave no event and nothing counted; the delivery
// after them records once and emits once, and a redelivery after it
// emits nothing. check finds no drift (events included) at every step.
func TestUploadEventsOnce(t *testing.T) {
	e := startUploads(t, func(o *localstack.Options) { o.NotifyInterval = time.Hour })
	ctx := context.Background()
	tools := []string{"gitleaks", "osv-scanner", "trivy", "grype"}
	deliver := func(id int64, size int) error {
		_, err := e.stack.Invoke(ctx, "IngestSarifUploadFunction", s3Event(t, e.stack.Bucket.Name(), id, size))
		return err
	}
	upload := func(obj []byte) int64 {
		up := e.create(t, 7)
		if code, body := put(t, up.UploadURL, up.UploadHeaders, obj); code != 200 {
			t.Fatalf("PUT %d %s", code, body)
		}
		return up.ID
	}
	events := map[string]int{}
	// clean checks the table: no drift, scans scans, no finding of a scan
	// never committed, and the events of each type counted so far.
	clean := func(step string, scans int) map[string][]string {
		t.Helper()
		rep, err := e.db.Store.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Scans != scans || rep.Unrecorded != 0 || len(rep.Drift) > 0 {
			t.Errorf("%s: check: %d scans (want %d), %d unrecorded, drift %v", step, rep.Scans, scans, rep.Unrecorded, rep.Drift)
		}
		got := outboxEvents(t, e.db)
		for typ, n := range events {
			if len(got[typ]) != n {
				t.Errorf("%s: %d %s events; want %d", step, len(got[typ]), typ, n)
			}
		}
		for typ := range got {
			if _, ok := events[typ]; !ok {
				t.Errorf("%s: a %s event", step, typ)
			}
		}
		return got
	}
	failing := func(step string, id int64, size int, fault func(string, any) error) {
		t.Helper()
		e.db.Fault.Store(&fault)
		err := deliver(id, size)
		e.db.Fault.Store(nil)
		if err == nil {
			t.Fatalf("%s: the delivery succeeded", step)
		}
		t.Logf("%s: %v", step, err)
		if s := e.status(t, id); s.Status != "processing" {
			t.Errorf("%s: the upload is %s; want processing (to be retried)", step, s.Status)
		}
	}

	// Findings: the first delivery's writes fail after 3 batches of
	// findings; the second dies (its writes and deletes fail) leaving
	// findings that no scan counts; the third takes over, drops them and
	// records.
	obj := gz(t, runsLog(tools, []int{30, 40, 50, 60}))
	first := upload(obj)
	failing("writes fail", first, len(obj), findingWrites(3, false, false))
	clean("after the writes failed", 0)
	failing("dies", first, len(obj), findingWrites(3, true, false))
	if rep, err := e.db.Store.Check(ctx); err != nil || rep.Unrecorded == 0 || len(rep.Drift) > 0 || len(outboxEvents(t, e.db)) > 0 {
		t.Fatalf("after a delivery that died: %+v %v; want findings counted apart, no drift, no event", rep, err)
	}
	if err := deliver(first, len(obj)); err != nil {
		t.Fatal(err)
	}
	s := e.status(t, first)
	if s.Status != "complete" || len(s.ScanIDs) != len(tools) || s.Recorded != 180 {
		t.Fatalf("the delivery that took over: %+v", s)
	}
	events[scangate.EventScanRecorded], events[scangate.EventGateChanged], events[scangate.EventUploadCompleted] = 4, 1, 1
	got := clean("recorded", 4)
	var ids []int64
	for _, data := range got[scangate.EventScanRecorded] {
		var v scangate.ScanView
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, s.ScanIDs) {
		t.Errorf("scan.recorded of scans %v; the upload recorded %v", ids, s.ScanIDs)
	}
	var g scangate.GateChange
	if err := json.Unmarshal([]byte(got[scangate.EventGateChanged][0]), &g); err != nil {
		t.Fatal(err)
	}
	if g.Sequence != 1 || g.Cause != scangate.CauseScan || !g.Blocked || g.Previous != nil || g.Number != 7 {
		t.Errorf("the first gate change: %+v", g)
	}
	if err := deliver(first, len(obj)); err != nil {
		t.Fatal(err)
	}
	clean("redelivered", 4)

	// A clean log of the same runs: its commit fails once, then a retry
	// records it, unblocking the PR (the second gate change) once.
	obj = gz(t, runsLog(tools, make([]int, len(tools))))
	second := upload(obj)
	failing("the commit fails", second, len(obj), findingWrites(0, false, true))
	clean("after the commit failed", 4)
	for range 2 {
		if err := deliver(second, len(obj)); err != nil {
			t.Fatal(err)
		}
	}
	if s := e.status(t, second); s.Status != "complete" || len(s.ScanIDs) != len(tools) {
		t.Fatalf("the clean upload: %+v", s)
	}
	events[scangate.EventScanRecorded], events[scangate.EventGateChanged], events[scangate.EventUploadCompleted] = 8, 2, 2
	got = clean("unblocked", 8)
	var seqs []int64
	for _, data := range got[scangate.EventGateChanged] {
		if err := json.Unmarshal([]byte(data), &g); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, g.Sequence)
		if g.Sequence == 2 && (g.Blocked || g.Previous == nil || !g.Previous.Blocked || g.Cause != scangate.CauseScan) {
			t.Errorf("the second gate change: %+v", g)
		}
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int64{1, 2}) {
		t.Errorf("gate change sequences %v; want 1, 2", seqs)
	}

	// The same clean log again changes no gate: its scans only.
	third := upload(obj)
	if err := deliver(third, len(obj)); err != nil {
		t.Fatal(err)
	}
	events[scangate.EventScanRecorded], events[scangate.EventUploadCompleted] = 12, 3
	clean("the same again", 12)
}
