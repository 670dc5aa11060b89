package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestHeadCommitGateChangeIsNow: a clean scan of a new commit of a clean
// PR, weeks after its gate was last decided, leaves a pr.gate_changed
// that occurred when that scan was recorded (its webhook's occurred_at,
// its place in the outbox's TTL) and a gate evaluated then, as GET
// /pr/{pr_id}/gate shows it: not the time of the decision before, which
// would date the event weeks back and put its TTL in the past.
func TestHeadCommitGateChangeIsNow(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	before := now.Add(-40 * 24 * time.Hour)
	var prID int64
	for i, at := range []time.Time{before, now} {
		ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
			WebhookID: 1, PR: scangate.PRRef{Number: 8, Name: "n", Link: "l"}, Status: "completed", CommitSHA: strings.Repeat(strconv.Itoa(i+1), 40)}
		sc, _, err := env.Store.RecordScan(ctx, ns, testWho, at)
		if err != nil {
			t.Fatal(err)
		}
		prID = sc.PRID
	}
	changes := gateChanges(t, env)
	if len(changes) != 2 || changes[1].Sequence != 2 || changes[1].Blocked {
		t.Fatalf("gate changes %+v; want two, the second of the new commit, passing", changes)
	}
	var second map[string]string
	for _, e := range eventsOf(t, env, scangate.EventGateChanged) {
		if strings.Contains(attrS(e, "data"), `"sequence":2`) {
			second = map[string]string{"occurred_at": attrS(e, "occurred_at")}
			if ttl := attrN(t, e, "ttl"); ttl <= now.Unix() {
				t.Errorf("the new commit's gate change expires at %s, before it was written", time.Unix(ttl, 0).UTC())
			}
		}
	}
	if got := second["occurred_at"]; got != scangate.At(now).String() {
		t.Errorf("the new commit's gate change occurred at %s; want %s, when its scan was recorded", got, scangate.At(now))
	}
	g, err := env.Store.PRGate(ctx, prID)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Gate.EvaluatedAt.Equal(now) || !changes[1].EvaluatedAt.Equal(now) {
		t.Errorf("the gate was evaluated at %s (the event says %s); want %s, for the new commit", g.Gate.EvaluatedAt, changes[1].EvaluatedAt, now)
	}
	r, err := env.Store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Drift) > 0 {
		t.Errorf("check: %v", r.Drift)
	}
}

// attrN is a number attribute of an item, 0 when it has none.
func attrN(t *testing.T, it map[string]types.AttributeValue, name string) int64 {
	t.Helper()
	n, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
