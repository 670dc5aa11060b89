package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// eventsOf are the outbox's events of one type, oldest first.
func eventsOf(t *testing.T, env *ddbtest.Env, typ string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	for _, e := range outbox(t, env) {
		if attrS(e, "type") == typ {
			out = append(out, e)
		}
	}
	return out
}

// gateChanges are the data of the outbox's pr.gate_changed events, in the
// order of their sequences.
func gateChanges(t *testing.T, env *ddbtest.Env) []scangate.GateChange {
	t.Helper()
	var out []scangate.GateChange
	for _, e := range eventsOf(t, env, scangate.EventGateChanged) {
		var g scangate.GateChange
		if err := json.Unmarshal([]byte(attrS(e, "data")), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b scangate.GateChange) int { return int(a.Sequence - b.Sequence) })
	return out
}

// TestGateEventsFollowTheDecision: every change of a PR's gate leaves one
// pr.gate_changed in the transaction that writes it, whatever its cause
// (a recording, an allowlist, an expiry, a policy change), with the gate
// as GET /pr/{pr_id}/gate shows it, the PR's identity, the next sequence
// and the decision before; a new head commit is a gate change too, and a
// recording that changes neither writes none. Every recording leaves one
// scan.recorded per scan, the scan as GET /pr/scan/{id} shows it. The
// events' sequences are 1 to gseq, and check finds no drift.
func TestGateEventsFollowTheDecision(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var txs []*dynamodb.TransactWriteItemsInput
	st := env.Recorder(t, func(_ string, input any) {
		if in, ok := input.(*dynamodb.TransactWriteItemsInput); ok {
			txs = append(txs, in)
		}
	})
	t0 := time.Now().Add(-time.Hour)
	shaA, shaB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	scan := func(sha string, at time.Time, names ...string) scangate.Scan {
		t.Helper()
		ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
			WebhookID: 1, PR: scangate.PRRef{Number: 7, Name: "n", Link: "l"}, Status: "completed", CommitSHA: sha, OtherDetails: []byte(`{"note":"<&>"}`)}
		for _, n := range names {
			ns.Findings = append(ns.Findings, scangate.Finding{Name: n})
		}
		sc, _, err := st.RecordScan(ctx, ns, testWho, at)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}

	first := scan(shaA, t0, "sha256:aa")
	changes := gateChanges(t, env)
	if len(changes) != 1 {
		t.Fatalf("%d gate changes after the first scan", len(changes))
	}
	g, err := env.Store.PRGate(ctx, first.PRID)
	if err != nil {
		t.Fatal(err)
	}
	want := scangate.GateChange{GateView: scangate.ViewGate(g), VcID: 3, RepoID: 5, RepoName: "acme/api", Number: 7, Sequence: 1, Cause: scangate.CauseScan}
	if a, b := mustJSON(t, changes[0]), mustJSON(t, want); a != b {
		t.Errorf("the first gate change\n%s\nwant (the gate as GET shows it)\n%s", a, b)
	}
	if !changes[0].Blocked || changes[0].Previous != nil || *changes[0].HeadSHA != shaA {
		t.Errorf("the first gate change: %+v", changes[0])
	}
	// The scan, its audit entry, its scan.recorded, the PR record and its
	// gate change: one transaction.
	var pks []string
	for _, it := range txs[len(txs)-1].TransactItems {
		if it.Put != nil {
			pks = append(pks, it.Put.Item["PK"].(*types.AttributeValueMemberS).Value)
		}
	}
	if events := 0; !slices.ContainsFunc(pks, func(pk string) bool {
		if strings.HasPrefix(pk, store.EventPrefix) {
			events++
		}
		return events == 2
	}) || !slices.Contains(pks, "PR#3#5#7") || !slices.Contains(pks, "AUDIT") {
		t.Errorf("the recording's transaction puts %v", pks)
	}
	recorded := eventsOf(t, env, scangate.EventScanRecorded)
	sc, pr, err := env.Store.Scan(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || attrS(recorded[0], "data") != mustJSON(t, scangate.ViewScan(sc, pr)) {
		t.Errorf("scan.recorded %v; want the scan as GET shows it: %s", recorded, mustJSON(t, scangate.ViewScan(sc, pr)))
	}

	// An allowlist unblocks it; the next scan, of a new commit, keeps it
	// unblocked (a change: its commit needs a status); a clean scan of the
	// same commit changes nothing.
	a, it, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa", Active: true,
		Global: true}, Reason: "false_positive"}, "", testWho, t0.Add(time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	runAt(t, st, t0.Add(time.Minute), it)
	scan(shaB, t0.Add(2*time.Minute), "sha256:aa")
	scan(shaB, t0.Add(3*time.Minute))
	// The allowlist expires; a policy that blocks only critical secrets
	// unblocks it again.
	soon := scangate.At(t0.Add(4 * time.Minute))
	_, it, err = st.UpdateAllowlist(ctx, a.ID, scangate.AllowlistChange{ExpiresAt: &soon}, testWho, t0.Add(3*time.Minute+time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	runAt(t, st, t0.Add(3*time.Minute+time.Second), it)
	scan(shaB, t0.Add(3*time.Minute+2*time.Second), "sha256:aa", "sha256:bb")
	expired, err := st.ExpireDue(ctx, t0.Add(5*time.Minute), 0)
	if err != nil || len(expired) != 1 {
		t.Fatalf("expired %d, %v", len(expired), err)
	}
	runAt(t, st, t0.Add(5*time.Minute), expired...)
	critical := scangate.PolicyChange{Global: scangate.DefaultPolicy().With(&scangate.PolicyOverride{
		BlockSeverity: map[scangate.ScanType]scangate.Severity{scangate.ScanSecret: scangate.SeverityCritical}})}
	at := t0.Add(6 * time.Minute)
	run := st.Runner(func() time.Time { return at }, nil)
	_, it, err = st.SetGatePolicy(ctx, critical, testWho, at, run.LeaseFrom(at))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Continue(ctx, it); err != nil {
		t.Fatal(err)
	}

	changes = gateChanges(t, env)
	type step struct {
		cause       string
		blocked     bool
		wasBlocked  bool
		head        string
		reasonCount int
	}
	var got []step
	for _, c := range changes {
		s := step{cause: c.Cause, blocked: c.Blocked, head: *c.HeadSHA, reasonCount: len(c.Reasons)}
		if c.Previous != nil {
			s.wasBlocked = c.Previous.Blocked
		}
		got = append(got, s)
	}
	wantSteps := []step{
		{scangate.CauseScan, true, false, shaA, 1},
		{scangate.CauseAllowlist, false, true, shaA, 0},
		{scangate.CauseScan, false, false, shaB, 0},  // a new head commit
		{scangate.CauseScan, true, false, shaB, 1},   // sha256:bb, not covered
		{scangate.CauseExpiry, true, true, shaB, 1},  // sha256:aa counts again: 2 findings
		{scangate.CausePolicy, false, true, shaB, 0}, // high findings no longer block
	}
	if !slices.Equal(got, wantSteps) {
		t.Errorf("gate changes\n%+v\nwant\n%+v", got, wantSteps)
	}
	for i, c := range changes {
		if c.Sequence != int64(i+1) {
			t.Errorf("gate change %d has sequence %d", i, c.Sequence)
		}
	}
	if n := len(changes); n == 6 && changes[4].Reasons[0].Count != 2 {
		t.Errorf("the expiry's reason %+v; want 2 findings", changes[4].Reasons)
	}
	if n := len(eventsOf(t, env, scangate.EventScanRecorded)); n != 4 {
		t.Errorf("%d scan.recorded events for 4 scans", n)
	}
	last, err := env.Store.PRGate(ctx, first.PRID)
	if err != nil || mustJSON(t, scangate.ViewGate(last)) != mustJSON(t, changes[len(changes)-1].GateView) {
		t.Errorf("the last gate change is not the stored gate: %+v %v", last, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Errorf("check: %v %v", rep.Drift, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := scangate.PlainJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckFindsEventDrift: check reports a change without its event and
// an event without its change: a pr.gate_changed or scan.recorded
// missing, one repeated, one naming a PR or scan that does not exist, and
// a newest gate change that is not the stored decision.
func TestCheckFindsEventDrift(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	for _, names := range [][]string{{"sha256:aa"}, {}, {"sha256:bb"}} { // blocked, unblocked, blocked
		ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
			WebhookID: 1, PR: scangate.PRRef{Number: 7, Name: "n", Link: "l"}, Status: "completed"}
		for _, n := range names {
			ns.Findings = append(ns.Findings, scangate.Finding{Name: n})
		}
		if _, _, err := env.Store.RecordScan(ctx, ns, testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Fatalf("check before: %q %v", rep.Drift, err)
	}
	gates, scans := eventsOf(t, env, scangate.EventGateChanged), eventsOf(t, env, scangate.EventScanRecorded)
	if len(gates) != 3 || len(scans) != 3 {
		t.Fatalf("%d gate changes, %d scans recorded", len(gates), len(scans))
	}
	del := func(it map[string]types.AttributeValue) {
		t.Helper()
		if _, err := env.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &env.Table,
			Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(it map[string]types.AttributeValue) {
		t.Helper()
		if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	// A copy of an event under another id, its data changed by edit.
	copyOf := func(it map[string]types.AttributeValue, id string, edit func(map[string]any)) map[string]types.AttributeValue {
		var data map[string]any
		if err := json.Unmarshal([]byte(attrS(it, "data")), &data); err != nil {
			t.Fatal(err)
		}
		edit(data)
		b, _ := json.Marshal(data)
		c := map[string]types.AttributeValue{}
		for k, v := range it {
			c[k] = v
		}
		c["PK"], c["id"], c["data"] = &types.AttributeValueMemberS{Value: store.EventPrefix + id}, &types.AttributeValueMemberS{Value: id},
			&types.AttributeValueMemberS{Value: string(b)}
		return c
	}
	expect := func(what string, want ...string) {
		t.Helper()
		rep, err := env.Store.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !slices.ContainsFunc(rep.Drift, func(d string) bool { return strings.Contains(d, w) }) {
				t.Errorf("%s: check says %q; want %q", what, rep.Drift, w)
			}
		}
	}
	var second map[string]types.AttributeValue
	for _, g := range gates {
		if strings.Contains(attrS(g, "data"), `"sequence":2`) {
			second = g
		}
	}
	del(second)
	expect("a gate change without its event", "PR 1: gate sequence 3, 2 pr.gate_changed events", "pr.gate_changed sequences 1 then 3")
	put(second)
	put(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ1", func(map[string]any) {}))
	expect("a gate change twice", "PR 1: gate sequence 3, 4 pr.gate_changed events", "pr.gate_changed sequences 2 then 2")
	del(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ1", func(map[string]any) {}))
	put(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ2", func(d map[string]any) { d["pr_id"] = 9 }))
	expect("an event of no PR", "pr.gate_changed events of PR 9: no such PR")
	del(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ2", func(map[string]any) {}))
	put(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ3", func(d map[string]any) { d["sequence"] = 4 }))
	expect("a newest change that is not the stored decision", "PR 1: gate sequence 3, its newest pr.gate_changed has 4")
	del(copyOf(second, "01ZZZZZZZZZZZZZZZZZZZZZZZ3", func(map[string]any) {}))

	del(scans[0])
	put(copyOf(scans[1], "01ZZZZZZZZZZZZZZZZZZZZZZZ4", func(map[string]any) {}))
	put(copyOf(scans[1], "01ZZZZZZZZZZZZZZZZZZZZZZZ5", func(d map[string]any) { d["id"] = 99 }))
	var first struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal([]byte(attrS(scans[0], "data")), &first)
	var twice struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal([]byte(attrS(scans[1], "data")), &twice)
	expect("scans without and with too many events", fmt.Sprintf("scan %d: no scan.recorded event", first.ID),
		fmt.Sprintf("scan %d: 2 scan.recorded events", twice.ID), "event scan.recorded of scan 99: no such scan")
}
