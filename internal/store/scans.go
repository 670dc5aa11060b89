package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// Labels of a recording's commit.
const (
	lScan = "scan"
	lPR   = "pr"
	lPRID = "pr id"
	lOnce = "once"
)

// scansPerCommit bounds the scans of one recording's commit: each with its
// audit entry and its scan.recorded event, with the PR, its id item, the
// once key and the gate's event: 64 items of DynamoDB's 100, and under its
// 4 MB a transaction at worst (a scan and its event each carry up to 64
// KiB of other_details: TestWorstCaseRecordingCommit). An upload has at
// most 40 scans (20 runs, two types): almost always one commit, so one
// upload is one gate change.
const scansPerCommit = 20

// RecordScan stores a scan with its findings and creates or updates its
// PR record, judging the findings by the allowlists as they are and its
// block status and the PR's gate by the gate policy.
func (s *Store) RecordScan(ctx context.Context, ns scangate.NewScan, who scangate.Who, now time.Time) (scangate.Scan, scangate.PR, error) {
	scans, pr, _, err := s.RecordScans(ctx, []scangate.NewScan{ns}, who, now, "")
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	return scans[0], pr, nil
}

// onceTTL is how long a recording remembers its once key: far beyond the
// redeliveries of an event (S3 retries within hours).
const onceTTL = 7 * 24 * time.Hour

func onceKey(k string) item { return key(KeyOnce+k, "ONCE") }

// onceKeys are the keys of a recording's commits: once, then once#<i> for
// the commits after the first.
func onceKeys(once string, commits int) []string {
	keys := []string{once}
	for i := 1; i < commits; i++ {
		keys = append(keys, once+"#"+strconv.Itoa(i))
	}
	return keys
}

// recordedOnce reads the once keys of a recording's commits: the scans
// each recorded, by commit.
func (s *Store) recordedOnce(ctx context.Context, keys []string) (map[int][]int64, error) {
	ks := make([]item, len(keys))
	at := map[string]int{}
	for i, k := range keys {
		ks[i] = onceKey(k)
		at[KeyOnce+k] = i
	}
	items, err := s.batchGetAll(ctx, "get recording keys", ks)
	if err != nil {
		return nil, err
	}
	done := map[int][]int64{}
	for _, it := range items {
		done[at[getS(it, aPK)]] = getIDs(it, aScanID)
	}
	return done, nil
}

// scansOf reads recorded scans and their PR record, in the order of ids.
func (s *Store) scansOf(ctx context.Context, ids []int64) ([]scangate.Scan, scangate.PR, error) {
	keys := make([]item, len(ids))
	for i, id := range ids {
		keys[i] = scanKey(id)
	}
	items, err := s.batchGetAll(ctx, "get scans", keys)
	if err != nil {
		return nil, scangate.PR{}, err
	}
	items = inOrder(items, keys)
	if len(items) != len(ids) {
		return nil, scangate.PR{}, fmt.Errorf("scans %v: %d of them are missing", ids, len(ids)-len(items))
	}
	scans := make([]scangate.Scan, len(items))
	for i, it := range items {
		scans[i] = scanFrom(it)
	}
	sc := scans[0]
	if sc.BranchID != 0 { // branch analyses: no pull request
		return scans, scangate.PR{}, nil
	}
	pr, found, err := s.prRecord(ctx, sc.VcID, sc.RepoID, sc.PRNumber)
	if err != nil {
		return nil, scangate.PR{}, err
	}
	if !found {
		return nil, scangate.PR{}, fmt.Errorf("scan %d: its PR record (%d, %d, %d) is missing", sc.ID, sc.VcID, sc.RepoID, sc.PRNumber)
	}
	return scans, pr.PR, nil
}

// nextIDs allocates n ids of an entity at once: one UpdateItem ADD n.
func (s *Store) nextIDs(ctx context.Context, entity string, n int) ([]int64, error) {
	out, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       key(KeyCounter+entity, "COUNTER"),
		UpdateExpression:          aws.String("ADD " + ref(aN) + " :n"),
		ExpressionAttributeValues: item{":n": num(int64(n))},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return nil, dbErr("allocate "+entity+" ids", err)
	}
	last := getN(out.Attributes, aN)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n-1-i)
	}
	return ids, nil
}

// recordingRows are new findings of a scan as judgement sees them, the
// first of them at index base.
func recordingRows(scanID int64, base int, ns scangate.NewScan, fs []scangate.Finding) []findingRow {
	rows := make([]findingRow, len(fs))
	for i, f := range fs {
		rows[i] = newRow(key(scanPK(scanID), findingSK(base+i)), scanID, findingRef(ns, f), f.InSource, f.Severity)
	}
	return rows
}

// findingRef is a new finding of a scan as allowlists match it.
func findingRef(ns scangate.NewScan, f scangate.Finding) scangate.FindingRef {
	ref := scangate.FindingRef{Type: ns.Type, Name: f.Name, RepoID: ns.RepoID, VcID: ns.VcID, Path: f.Path, Fingerprint: f.Fingerprint}
	if ns.Type == scangate.ScanVulnerability {
		ref.Aliases = f.Aliases
	}
	return ref
}

// rowGroups lists the distinct groups of rows.
func rowGroups(rows []findingRow) []groupKey {
	seen := map[groupKey]bool{}
	var gs []groupKey
	for _, r := range rows {
		for _, g := range r.groups {
			if !seen[g] {
				seen[g] = true
				gs = append(gs, g)
			}
		}
	}
	return gs
}

// newScan is the scan record of a recording: its unsuppressed findings
// per severity sev (newSev of them new against its baseline), its block
// status by the policy p. Its category,
// commit and ref are also in other_details, where the spec's scan shape
// shows them.
func newScan(id int64, ns scangate.NewScan, sev, newSev scangate.SevCounts, p scangate.Policy, now time.Time) scangate.Scan {
	sc := scangate.Scan{
		ID: id, PRNumber: ns.PR.Number, VcID: ns.VcID, WebhookID: ns.WebhookID, RepoID: ns.RepoID,
		VcType: ns.VcType, Type: ns.Type, CreatedAt: scangate.At(now), VcName: ns.VcName, RepoName: ns.RepoName,
		Status: ns.Status, OtherDetails: ns.OtherDetails, StatURL: ns.StatURL,
		Category: ns.Category, CommitSHA: ns.CommitSHA, Ref: ns.Ref, Branch: ns.Branch,
		BaseRef: ns.BaseRef, BaseSHA: ns.BaseSHA,
	}
	if sc.Category == "" {
		sc.Category = scangate.DefaultCategory
	}
	sc.OtherDetails = scanDetails(ns.OtherDetails, sc)
	sc.Sev, sc.NewSev = sev, newSev
	sc.SecretCount, sc.VulnerabilityCount = scangate.CategoryScan{Type: sc.Type, Sev: sc.Sev}.Counts()
	sc.BlockStatus = p.ScanBlocks(sc.Type, sc.Status, sc.Sev, sc.NewSev)
	return sc
}

// scanDetails is a scan's other_details with its category, and its
// commit, ref and base when it has them, set: those names are the scan's
// own, so the client's members of the same names are not kept.
func scanDetails(details json.RawMessage, sc scangate.Scan) json.RawMessage {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(details, &obj) // an object, checked when the request was read
	set := func(name, v string) {
		delete(obj, name)
		if v != "" {
			b, _ := scangate.PlainJSON(v)
			obj[name] = b
		}
	}
	set("category", sc.Category)
	set("commit_sha", sc.CommitSHA)
	set("ref", sc.Ref)
	set("base_ref", sc.BaseRef)
	set("base_sha", sc.BaseSHA)
	b, _ := scangate.PlainJSON(obj) // raw JSON values only
	return b
}

// commitScans puts scans of one PR, with their audit entries and
// scan.recorded events, and creates or updates its PR record (its gate
// judged by the policy pol, and its pr.gate_changed when the decision
// moves) in one transaction. The first scan of a PR puts the record under
// attribute_not_exists; a racing first scan loses that condition, reads
// the record and updates it under its version instead.
func (s *Store) commitScans(ctx context.Context, scans []scangate.Scan, pref scangate.PRRef, once string, who scangate.Who, pol policies) error {
	var newPRID int64
	first := scans[0]
	return s.retry.Do(ctx, "record scan", func(int) (bool, error) {
		recs, err := s.prRecords(ctx, []item{prKey(first.VcID, first.RepoID, first.PRNumber)})
		if err != nil {
			return true, err
		}
		old, found := recs[getS(prKey(first.VcID, first.RepoID, first.PRNumber), aPK)]
		if !found {
			if newPRID == 0 {
				if newPRID, err = s.nextID(ctx, "pr"); err != nil {
					return true, err
				}
			}
			old = prRecord{PR: scangate.PR{ID: newPRID, Number: first.PRNumber, RepoID: first.RepoID, VcID: first.VcID,
				WebhookID: first.WebhookID, CreatedAt: first.CreatedAt}, cats: map[catKey]catScan{}}
		}
		t, err := s.recordingTx(old, found, scans, pref, once, who, pol)
		if err != nil {
			return true, err
		}
		err = s.commit(ctx, "record scan", t)
		switch {
		case err == nil, failed(err, lOnce):
			return true, err
		case lostRace(err, lPR):
			return false, nil
		}
		return true, err
	})
}

// recordingTx is the transaction of a recording's commit: the scans of
// one PR (old as read, found or made up for a new PR), with their audit
// entries and scan.recorded events, its record and its gate change, and
// the once key when once is set.
func (s *Store) recordingTx(old prRecord, found bool, scans []scangate.Scan, pref scangate.PRRef, once string, who scangate.Who, pol policies) (*tx, error) {
	first := scans[0]
	next := old
	t := s.newTx()
	var ids []int64
	for i := range scans {
		scans[i].PRID = old.ID
		next, _ = next.with(scans[i], pref)
		t.put(lScan, scanItem(scans[i]), when("attribute_not_exists("+ref(aPK)+")"))
		t.scans, t.findings = t.scans+1, t.findings+int(scans[i].SecretCount+scans[i].VulnerabilityCount)
		t.newFindings += int(scans[i].Class.New)
		s.addAudit(t, scangate.NewAudit(scangate.AuditScanRecord, who, scanTarget(scans[i].ID), scanChanges(scans[i]), first.CreatedAt.Time))
		ids = append(ids, scans[i].ID)
	}
	if len(next.cats) > scangate.MaxCategories {
		return nil, scangate.Errorf(scangate.KindConflict, "pull request %d would have %d (scan type, category) pairs; it may have at most %d",
			old.ID, len(next.cats), scangate.MaxCategories)
	}
	next, _ = next.judge(pol.effective(first.RepoID), first.CreatedAt)
	for _, sc := range scans {
		s.addEvent(t, scangate.NewEvent(scangate.EventScanRecorded, sc.CreatedAt.Time, scangate.ViewScan(sc, next.asPR())))
	}
	next, _ = putPR(t, old, found, next, scangate.CauseScan)
	if !found {
		t.put(lPRID, prIDItem(next), nil)
	}
	putBasePR(t, old, found, next)
	if once != "" {
		it := merge(onceKey(once), item{aScanID: numList(ids), aTTL: num(first.CreatedAt.Add(onceTTL).Unix())})
		t.put(lOnce, it, when("attribute_not_exists("+ref(aPK)+")"))
	}
	return t, nil
}

func scanTarget(id int64) scangate.Target {
	return scangate.Target{Type: "scan", ID: strconv.FormatInt(id, 10)}
}

// scanChanges are what a scan.record audit entry tells of the scan.
func scanChanges(sc scangate.Scan) scangate.Changes {
	c := scangate.Changes{}
	if sc.BranchID != 0 {
		c.Set("branch_id", nil, sc.BranchID)
		c.Set("branch", nil, sc.Branch)
	} else {
		c.Set("pr_id", nil, sc.PRID)
	}
	c.Set("scan_type", nil, string(sc.Type))
	c.Set("category", nil, sc.Category)
	c.Set("status", nil, sc.Status)
	c.Set("secret_count", nil, sc.SecretCount)
	c.Set("vulnerability_count", nil, sc.VulnerabilityCount)
	if sc.CommitSHA != "" {
		c.Set("commit_sha", nil, sc.CommitSHA)
	}
	return c
}
