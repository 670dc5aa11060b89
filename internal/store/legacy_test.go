package store_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestRecordsOfBeforeCategories: a PR record written before categories
// (its newest scan of each type in sec_* and vuln_*, no cats, no stored
// gate) and its scans (no category, no severities) read as category
// default with findings of severity high, check finds no drift in them,
// and the first write after makes the record exact: the other
// categories' scans as stored (a failed scan stays failed), and the
// repository's name its newest scan's, which its gate change names.
func TestRecordsOfBeforeCategories(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	at := scangate.At(time.Now().Add(-time.Hour)).String()
	type av = types.AttributeValue
	s := func(v string) av { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int64) av { return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)} }
	b := func(v bool) av { return &types.AttributeValueMemberBOOL{Value: v} }
	put := func(it map[string]av) {
		t.Helper()
		if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(id int64, typ, status string, secrets, vulns int64) {
		put(map[string]av{"PK": s(fmt.Sprint("SCAN#", id)), "SK": s("SCAN"), "id": n(id), "pr_ref": n(1), "pr_number": n(7), "vc_id": n(1),
			"repo_id": n(2), "webhook_id": n(3), "vc_type": s("github"), "scan_type": s(typ), "created_at": s(at), "vc_name": s("v"),
			"repo_name": s("r"), "status": s(status), "block_status": b(true), "secret_count": n(secrets), "vulnerability_count": n(vulns),
			"cver": n(0), "GSI3PK": s("PRSCANS#1"), "GSI3SK": s(fmt.Sprintf("%s#%019d", at, id))})
	}
	scan(1, "SECRET", "completed", 2, 0)
	scan(2, "VULNERABILITY", "failed", 0, 0)
	for i := range 2 {
		put(map[string]av{"PK": s("SCAN#1"), "SK": s(fmt.Sprintf("FINDING#%06d", i)), "type": s("SECRET"), "name": s(fmt.Sprint("sha256:0", i)),
			"repo_id": n(2), "vc_id": n(1), "sup": b(false), "GSI1PK": s(fmt.Sprint("FINDING#SECRET#sha256:0", i)), "GSI1SK": s(fmt.Sprintf("%019d#%06d", 1, i))})
	}
	put(map[string]av{"PK": s("PR#1#2#7"), "SK": s("PR"), "id": n(1), "pr_number": n(7), "pr_name": s("n"), "pr_link": s("l"),
		"repo_id": n(2), "vc_id": n(1), "webhook_id": n(3), "created_at": s(at), "last_scan": s(at), "last_scan_id": n(2),
		"sec_scan": n(1), "sec_at": s(at), "sec_block": b(true), "secret_count": n(2),
		"vuln_scan": n(2), "vuln_at": s(at), "vuln_block": b(true), "vulnerability_count": n(0), "blocked": b(true), "ver": n(3),
		"GSI2PK": s("PRS"), "GSI2SK": s(at + "#0000000000000000001"), "GSI3PK": s("PRS#1#2"), "GSI3SK": s(at + "#0000000000000000001")})
	put(map[string]av{"PK": s("PRID#1"), "SK": s("PRID"), "vc_id": n(1), "repo_id": n(2), "pr_number": n(7)})
	put(map[string]av{"PK": s("COUNTER#pr"), "SK": s("COUNTER"), "n": n(1)})
	put(map[string]av{"PK": s("COUNTER#scan"), "SK": s("COUNTER"), "n": n(2)})
	g, err := env.Store.PRGate(ctx, 1)
	if err != nil || !g.Gate.Blocked || len(g.Categories) != 2 || g.Categories[0].Category != scangate.DefaultCategory ||
		g.Categories[0].Sev != (scangate.SevCounts{0, 2}) {
		t.Fatalf("the record of before categories reads %+v %v", g, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Fatalf("check: %q %v", rep.Drift, err)
	}
	// An allowlist of one of its findings: a re-evaluation writes it.
	if _, upd, err := allowNow(t, env.Store, scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:00", Active: true, Global: true}); err != nil || upd.Secrets != 1 {
		t.Fatalf("allowlist: %+v %v", upd, err)
	}
	changes := gateChanges(t, env)
	if len(changes) != 1 || changes[0].RepoName != "r" || changes[0].Cause != scangate.CauseAllowlist || changes[0].Sequence != 1 ||
		changes[0].Previous == nil || !changes[0].Previous.Blocked || changes[0].Reasons[0].Count != 1 {
		t.Fatalf("the gate changes of a record of before categories: %+v", changes)
	}
	ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r", WebhookID: 3,
		PR: scangate.PRRef{Number: 7, Name: "n", Link: "l"}, Status: "completed", Category: "gitleaks"}
	if _, _, err := env.Store.RecordScan(ctx, ns, testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	g, err = env.Store.PRGate(ctx, 1)
	if err != nil || len(g.Categories) != 3 || len(g.Gate.Reasons) != 2 || g.Gate.Reasons[0].Kind != scangate.ReasonFindings ||
		g.Gate.Reasons[0].Count != 1 || g.Gate.Reasons[1].Kind != scangate.ReasonFailed {
		t.Fatalf("after a recording: %+v %v", g, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Fatalf("check after a recording: %q %v", rep.Drift, err)
	}
}
