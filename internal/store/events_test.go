package store_test

import (
	"context"
	"encoding/json"
	"errors"
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

// outbox reads every event item of the table, oldest first (a Scan: tests
// only), with its keys and TTL.
func outbox(t *testing.T, env *ddbtest.Env) []map[string]types.AttributeValue {
	t.Helper()
	return env.Outbox(t)
}

func attrS(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// TestOutboxAllowlistEvents: creating and modifying an allowlist each
// write one event, in the transaction that writes the allowlist and its
// audit entry: allowlist.created and allowlist.updated with the allowlist
// as GET /whitelist lists it, a ULID of the change's time, a TTL. A change
// whose transaction fails writes neither the change nor its event.
func TestOutboxAllowlistEvents(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var txs []*dynamodb.TransactWriteItemsInput
	st := env.Recorder(t, func(op string, input any) {
		if in, ok := input.(*dynamodb.TransactWriteItemsInput); ok {
			txs = append(txs, in)
		}
	})
	who := scangate.Who{Actor: &scangate.Actor{UserID: 1, Username: "admin"}, RequestID: "r1"}
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	a, _, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa",
		Active: true, Global: true}, Reason: "false_positive"}, "first", who, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := "sha256:bb"
	if _, _, err := st.UpdateAllowlist(ctx, a.ID, scangate.AllowlistChange{Name: &name}, who, now.Add(time.Second), 0); err != nil {
		t.Fatal(err)
	}
	events := outbox(t, env)
	if len(events) != 2 {
		t.Fatalf("%d events, want 2: %v", len(events), events)
	}
	for i, want := range []struct {
		typ, name string
		at        time.Time
	}{{scangate.EventAllowlistCreated, "sha256:aa", now}, {scangate.EventAllowlistUpdated, "sha256:bb", now.Add(time.Second)}} {
		ev := events[i]
		id := attrS(ev, "id")
		if attrS(ev, "PK") != store.EventPrefix+id || attrS(ev, "SK") != "EVENT" || len(id) != 26 || attrS(ev, "type") != want.typ {
			t.Errorf("event %d: %v", i, ev)
		}
		if attrS(ev, "occurred_at") != scangate.At(want.at).String() || !strings.HasPrefix(id, "01") {
			t.Errorf("event %d at %s, id %s", i, attrS(ev, "occurred_at"), id)
		}
		if ttl := ev["ttl"].(*types.AttributeValueMemberN).Value; ttl == "" || ttl[0] == '0' {
			t.Errorf("event %d has no TTL", i)
		}
		var data scangate.AllowlistView
		if err := json.Unmarshal([]byte(attrS(ev, "data")), &data); err != nil || data.ID != a.ID || data.Name != want.name ||
			*data.Reason != "false_positive" || !data.Active || len(data.Paths) != 0 {
			t.Errorf("event %d data %s (%v)", i, attrS(ev, "data"), err)
		}
		// The allowlist, its audit entry and its event: one transaction.
		var pks []string
		for _, it := range txs[i].TransactItems {
			if it.Put != nil {
				pks = append(pks, it.Put.Item["PK"].(*types.AttributeValueMemberS).Value)
			}
		}
		if !slices.Contains(pks, store.EventPrefix+id) || !slices.Contains(pks, "AUDIT") || !slices.Contains(pks, "ALLOW#1") {
			t.Errorf("transaction %d puts %v", i, pks)
		}
	}
	// The event's id sorts after the created one's: ids are time-ordered.
	if attrS(events[0], "id") >= attrS(events[1], "id") {
		t.Errorf("ids out of order: %s %s", attrS(events[0], "id"), attrS(events[1], "id"))
	}

	// A transaction that fails leaves neither the change nor its event.
	fail := func(op string, _ any) error {
		if op == "TransactWriteItems" {
			return errors.New("the connection broke")
		}
		return nil
	}
	env.Fault.Store(&fail)
	active := false
	if _, _, err := env.Store.UpdateAllowlist(ctx, a.ID, scangate.AllowlistChange{Active: &active}, who, now.Add(time.Minute), 0); err == nil {
		t.Fatal("the update succeeded without its transaction")
	}
	env.Fault.Store(nil)
	if n := len(outbox(t, env)); n != 2 {
		t.Errorf("%d events after a failed change, want 2", n)
	}

	// Events reads them back; MarkDispatched marks one.
	ids := []string{attrS(events[1], "id"), "01ZZZZZZZZZZZZZZZZZZZZZZZZ", attrS(events[0], "id")}
	if err := env.Store.MarkDispatched(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.MarkDispatched(ctx, ids[1]); err != nil { // none: nothing to mark
		t.Fatal(err)
	}
	got, err := env.Store.Events(ctx, ids)
	if err != nil || len(got) != 2 || got[0].ID != ids[0] || got[0].Dispatched || got[1].ID != ids[2] || !got[1].Dispatched ||
		got[0].Type != scangate.EventAllowlistUpdated || !json.Valid(got[0].Data) {
		t.Fatalf("Events: %+v %v", got, err)
	}
	if n := len(outbox(t, env)); n != 2 {
		t.Errorf("%d events after marking, want 2 (the missing one is not created)", n)
	}
}

// TestOutboxUploadEvents: an upload's final status is written with its
// event, upload.completed or upload.failed, carrying the upload as GET
// /pr/scan/sarif/uploads/{id} shows it; a finish refused (the lease is
// another's) writes no event.
func TestOutboxUploadEvents(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now()
	newUpload := func() scangate.Upload {
		u, err := env.Store.CreateUpload(ctx, scangate.Upload{CreatedBy: 1, CreatedAt: scangate.At(now), ExpiresAt: scangate.At(now.Add(time.Minute)),
			Envelope: scangate.NewScan{VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r", WebhookID: 3, Status: "completed",
				PR: scangate.PRRef{Number: 4, Name: "n", Link: "l"}}}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		lease := now.Add(time.Minute).UnixMilli()
		claimed, ok, err := env.Store.ClaimUpload(ctx, u.ID, now, lease)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return claimed
	}
	done, bad := newUpload(), newUpload()
	if ok, err := env.Store.FinishUpload(ctx, done, 1, scangate.UploadOutcome{ScanIDs: []int64{7}}, now); ok || err != nil {
		t.Fatalf("finished under another lease: %v %v", ok, err)
	}
	if n := len(outbox(t, env)); n != 0 {
		t.Fatalf("%d events after a refused finish", n)
	}
	if ok, err := env.Store.FinishUpload(ctx, done, done.Lease, scangate.UploadOutcome{ScanIDs: []int64{7}, Results: 3, Recorded: 1}, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	problem := scangate.Problem{Type: "about:blank", Title: "Unprocessable Entity", Status: 422, Detail: "not SARIF"}
	if ok, err := env.Store.FinishUpload(ctx, bad, bad.Lease, scangate.UploadOutcome{Errors: []scangate.Problem{problem}}, now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	events := outbox(t, env)
	if len(events) != 2 {
		t.Fatalf("%d events, want 2", len(events))
	}
	types := map[string]scangate.UploadView{}
	for _, ev := range events {
		var v scangate.UploadView
		if err := json.Unmarshal([]byte(attrS(ev, "data")), &v); err != nil {
			t.Fatal(err)
		}
		types[attrS(ev, "type")] = v
	}
	if v := types[scangate.EventUploadCompleted]; v.ID != done.ID || v.Status != "complete" || !slices.Equal(v.ScanIDs, []int64{7}) ||
		v.Results != 3 || v.Recorded != 1 || v.CompletedAt == nil || len(v.Errors) != 0 {
		t.Errorf("upload.completed: %+v", v)
	}
	if v := types[scangate.EventUploadFailed]; v.ID != bad.ID || v.Status != "failed" || len(v.Errors) != 1 || v.Errors[0].Detail != "not SARIF" {
		t.Errorf("upload.failed: %+v", v)
	}
	// What the event carries is what GET shows.
	stored, _ := env.Store.Upload(ctx, done.ID)
	want, _ := json.Marshal(scangate.ViewUpload(stored))
	for _, ev := range events {
		if attrS(ev, "type") == scangate.EventUploadCompleted && attrS(ev, "data") != string(want) {
			t.Errorf("event data %s\nGET shows %s", attrS(ev, "data"), want)
		}
	}
}

// TestOutboxExpiryEvent: applying an allowlist's expiry writes
// allowlist.expired (the allowlist, expired) with the allowlist.expire
// audit entry; a second run, which applies nothing, writes nothing.
func TestOutboxExpiryEvent(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now()
	past := scangate.At(now.Add(-time.Minute))
	a, _, err := env.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa",
		Active: true, Global: true}, ExpiresAt: &past}, "", scangate.Who{RequestID: "test"}, now.Add(-time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		expired, err := env.Store.ExpireDue(ctx, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		runAt(t, env.Store, now, expired...)
	}
	events := outbox(t, env)
	if len(events) != 2 || attrS(events[1], "type") != scangate.EventAllowlistExpired {
		t.Fatalf("events %v", events)
	}
	var v scangate.AllowlistView
	if err := json.Unmarshal([]byte(attrS(events[1], "data")), &v); err != nil || v.ID != a.ID || !v.Expired {
		t.Errorf("allowlist.expired data %s", attrS(events[1], "data"))
	}
}

// TestOutboxExpiringEvent: an allowlist whose expiry is at most 7 days
// away gets allowlist.expiring once, whatever runs or modifies follow; a
// new expiry gets its own; one further away gets none yet.
func TestOutboxExpiringEvent(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now()
	who := scangate.Who{RequestID: "test"}
	at := func(d time.Duration) *scangate.Time { t := scangate.At(now.Add(d)); return &t }
	soon, _, err := env.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa",
		Active: true, Global: true}, ExpiresAt: at(3 * 24 * time.Hour)}, "", who, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:bb",
		Active: true, Global: true}, ExpiresAt: at(10 * 24 * time.Hour)}, "", who, now, 0); err != nil {
		t.Fatal(err)
	}
	warn := func() int {
		t.Helper()
		n, err := env.Store.WarnExpiring(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := warn(); n != 1 {
		t.Fatalf("first run: %d notices, want 1", n)
	}
	if n := warn(); n != 0 {
		t.Errorf("second run: %d notices", n)
	}
	if _, _, err := env.Store.UpdateAllowlist(ctx, soon.ID, scangate.AllowlistChange{Comment: "still needed"}, who, now, 0); err != nil {
		t.Fatal(err)
	}
	if n := warn(); n != 0 {
		t.Errorf("after a modify: %d notices", n)
	}
	if _, _, err := env.Store.UpdateAllowlist(ctx, soon.ID, scangate.AllowlistChange{ExpiresAt: at(5 * 24 * time.Hour)}, who, now, 0); err != nil {
		t.Fatal(err)
	}
	if n := warn(); n != 1 {
		t.Errorf("after a new expiry: %d notices, want 1", n)
	}
	var expiring []string
	for _, ev := range outbox(t, env) {
		if attrS(ev, "type") == scangate.EventAllowlistExpiring {
			var v scangate.AllowlistView
			_ = json.Unmarshal([]byte(attrS(ev, "data")), &v)
			expiring = append(expiring, v.Name+" "+v.ExpiresAt.String())
		}
	}
	slices.Sort(expiring)
	if want := []string{"sha256:aa " + at(3*24*time.Hour).String(), "sha256:aa " + at(5*24*time.Hour).String()}; !slices.Equal(expiring, want) {
		t.Errorf("allowlist.expiring events %v, want %v", expiring, want)
	}
}
