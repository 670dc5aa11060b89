package store_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

func branchScan(branch, sha string, names ...string) scangate.NewScan {
	ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
		WebhookID: 1, Branch: branch, Status: "completed", CommitSHA: sha}
	for _, n := range names {
		ns.Findings = append(ns.Findings, scangate.Finding{Name: n, Path: "a.go"})
	}
	return ns
}

// TestBranchAnalysesNeverTouchAPR: a branch analysis belongs to its
// branch (one id per (vc_id, repo_id, name)), which keeps its newest scan
// of each (type, category) and its commit; it is audited (scan.record)
// and raises scan.recorded in its own transaction, and writes no PR
// record, no gate and no pr.gate_changed. An allowlist re-evaluates its
// findings (the branch's counts follow, read from its scans), and check
// finds no drift.
func TestBranchAnalysesNeverTouchAPR(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	shaA, shaB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	first, pr, err := env.Store.RecordScan(ctx, branchScan("main", shaA, "sha256:aa", "sha256:bb"), testWho, t0)
	if err != nil {
		t.Fatal(err)
	}
	if first.BranchID != 1 || first.Branch != "main" || first.PRID != 0 || pr.ID != 0 || first.SecretCount != 2 {
		t.Fatalf("the first branch analysis: %+v, its PR %+v", first, pr)
	}
	second, _, err := env.Store.RecordScan(ctx, branchScan("main", shaB, "sha256:aa"), testWho, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := env.Store.RecordScan(ctx, branchScan("dev", shaA), testWho, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if second.BranchID != 1 || other.BranchID != 2 {
		t.Errorf("branch ids %d and %d; want main's again (1), then dev's (2)", second.BranchID, other.BranchID)
	}
	b, err := env.Store.Branch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.Name != "main" || b.VcID != 3 || b.RepoID != 5 || len(b.Categories) != 1 || b.Categories[0].ScanID != second.ID ||
		b.Categories[0].CommitSHA != shaB || b.Categories[0].SecretCount != 1 || !b.LastScan.Equal(second.CreatedAt.Time) {
		t.Errorf("branch main: %+v", b)
	}
	if n := len(eventsOf(t, env, scangate.EventGateChanged)); n != 0 {
		t.Errorf("%d pr.gate_changed events for branch analyses; want none", n)
	}
	recorded := eventsOf(t, env, scangate.EventScanRecorded)
	if len(recorded) != 3 {
		t.Fatalf("%d scan.recorded events for 3 branch analyses", len(recorded))
	}
	sc, _, err := env.Store.Scan(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	var view map[string]any
	if err := json.Unmarshal([]byte(attrS(recorded[0], "data")), &view); err != nil {
		t.Fatal(err)
	}
	if attrS(recorded[0], "data") != mustJSON(t, scangate.ViewScan(sc, scangate.PR{})) || view["pr"] != nil || view["pr_id"] != nil ||
		view["branch"].(map[string]any)["name"] != "main" {
		t.Errorf("scan.recorded %s; want the branch analysis as GET shows it", attrS(recorded[0], "data"))
	}
	for _, it := range tableItems(t, env) {
		if attrS(it, "SK") == "PR" || strings.HasPrefix(attrS(it, "PK"), "PRSCANS#") {
			t.Errorf("a branch analysis wrote %s / %s", attrS(it, "PK"), attrS(it, "SK"))
		}
	}
	// An allowlist covers sha256:aa: main's newest scan counts 0.
	if _, upd, err := allowNow(t, env.Store, scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:aa", Active: true, Global: true}); err != nil || upd.Secrets != 2 {
		t.Fatalf("allowlist: %+v %v", upd, err)
	}
	if b, err = env.Store.Branch(ctx, 1); err != nil || b.Categories[0].SecretCount != 0 {
		t.Errorf("after the allowlist, main: %+v %v", b, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Errorf("check: %v %v", rep.Drift, err)
	}
	page, err := env.Store.BranchesPage(ctx, scangate.BranchFilter{VcID: 3, RepoID: 5}, 1, nil)
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "dev" || page.Next == nil {
		t.Fatalf("the first page of branches: %+v %v", page, err)
	}
	page, err = env.Store.BranchesPage(ctx, scangate.BranchFilter{VcID: 3, RepoID: 5}, 1, page.Next)
	if err != nil || len(page.Items) != 1 || page.Items[0].Name != "main" || page.Next != nil {
		t.Fatalf("the second page of branches: %+v %v", page, err)
	}
}

// TestBranchCheckFindsDrift: check compares a branch record with its
// analyses.
func TestBranchCheckFindsDrift(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	if _, _, err := env.Store.RecordScan(ctx, branchScan("main", ""), testWho, t0); err != nil {
		t.Fatal(err)
	}
	newest, _, err := env.Store.RecordScan(ctx, branchScan("main", ""), testWho, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &env.Table, Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "SCAN#" + strconv.FormatInt(newest.ID, 10)}, "SK": &types.AttributeValueMemberS{Value: "SCAN"}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := env.Store.Check(ctx)
	if err != nil || len(rep.Drift) == 0 || !strings.Contains(strings.Join(rep.Drift, "\n"), "branch 1 (main)") {
		t.Errorf("check after a branch's newest scan was lost: %v %v", rep.Drift, err)
	}
}

// tableItems reads every item of the table (a consistent Scan).
func tableItems(t *testing.T, env *ddbtest.Env) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(env.DB, &dynamodb.ScanInput{TableName: aws.String(env.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// TestClassificationCheck: a PR's scan recorded against its base's
// analysis is classified (check recounts it: no drift); a finding whose
// stored state disagrees with a recount is drift.
func TestClassificationCheck(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	if _, _, err := env.Store.RecordScan(ctx, branchScan("main", strings.Repeat("a", 40), "sha256:aa", "sha256:bb"), testWho, t0); err != nil {
		t.Fatal(err)
	}
	ns := branchScan("", "", "sha256:aa", "sha256:cc")
	ns.Branch, ns.PR, ns.BaseRef = "", scangate.PRRef{Number: 7, Name: "n", Link: "l"}, "main"
	sc, _, err := env.Store.RecordScan(ctx, ns, testWho, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c := sc.Class; !c.Classified || c.BaselineScanID != 1 || c.Match != scangate.MatchNewest || c.New != 1 || c.Unchanged != 1 || c.Absent != 1 {
		t.Fatalf("classification %+v", c)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Fatalf("check: %v %v", rep.Drift, err)
	}
	if _, err := env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &env.Table, Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "SCAN#" + strconv.FormatInt(sc.ID, 10)}, "SK": &types.AttributeValueMemberS{Value: "FINDING#000000"}},
		UpdateExpression: aws.String("SET bs = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "new"}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := env.Store.Check(ctx)
	if err != nil || !strings.Contains(strings.Join(rep.Drift, "\n"), `FINDING#000000 is "new", its baseline says "unchanged"`) {
		t.Errorf("check after a finding's state was altered: %v %v", rep.Drift, err)
	}
}

// TestBranchCheckFindsBaselineDrift: a branch whose newest analysis
// failed keeps its newest completed one as its baseline, which check
// compares with its analyses: a record that takes the failed analysis
// for its baseline is drift.
func TestBranchCheckFindsBaselineDrift(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	done, _, err := env.Store.RecordScan(ctx, branchScan("main", strings.Repeat("a", 40), "sha256:aa"), testWho, t0)
	if err != nil {
		t.Fatal(err)
	}
	ns := branchScan("main", strings.Repeat("b", 40))
	ns.Status = "failed"
	failed, _, err := env.Store.RecordScan(ctx, ns, testWho, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := env.Store.Branch(ctx, 1); err != nil || b.Categories[0].ScanID != failed.ID {
		t.Fatalf("main once its analysis failed: %+v %v; want the failed one shown as its newest", b, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Fatalf("check: %v %v", rep.Drift, err)
	}
	if _, err := env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &env.Table, Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "BRANCH#3#5"}, "SK": &types.AttributeValueMemberS{Value: "NAME#main"}},
		UpdateExpression: aws.String("REMOVE cats.#k.nc"), ExpressionAttributeNames: map[string]string{"#k": "SECRET#default"}}); err != nil {
		t.Fatal(err)
	}
	rep, err := env.Store.Check(ctx)
	want := "its SECRET#default baseline (newest completed scan) is " + strconv.FormatInt(failed.ID, 10)
	if err != nil || !strings.Contains(strings.Join(rep.Drift, "\n"), want) ||
		!strings.Contains(strings.Join(rep.Drift, "\n"), "its analyses say "+strconv.FormatInt(done.ID, 10)) {
		t.Errorf("check once main's record took its failed analysis for its baseline: %v %v", rep.Drift, err)
	}
}
