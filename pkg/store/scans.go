package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/scangate/scangate/pkg/scangate"
)

// Labels of a recording's commit.
const (
	lScan = "scan"
	lPR   = "pr"
	lPRID = "pr id"
	lOnce = "once"
)

// RecordScan stores a scan with its findings and creates or updates its PR
// record, judging the findings by the allowlists as they are.
//
// The findings are written first, in batches; the scan and its PR record
// are then committed in one transaction, so a reader never sees a scan
// without its findings.
//
// The handshake with concurrent allowlist changes: the recording reads the
// versions of its findings' groups before judging them, and again after
// its commit. A change that moved a group in between re-evaluates from
// the index and the RECENT items, but skips this scan while it is not
// committed; so for every group whose version moved, the recording settles
// its own findings against the group's new rules. A change that comes
// after the second read finds the findings through the index, or, while
// the index lags, through the RECENT items written with them.
func (s *Store) RecordScan(ctx context.Context, ns scangate.NewScan, now time.Time) (scangate.Scan, scangate.PR, error) {
	sc, pr, _, err := s.RecordScanOnce(ctx, ns, now, "")
	return sc, pr, err
}

// onceTTL is how long a recording remembers its once key: far beyond the
// redeliveries of an event (S3 retries within hours).
const onceTTL = 7 * 24 * time.Hour

func onceKey(k string) item { return key("ONCE#"+k, "ONCE") }

// RecordScanOnce is RecordScan for work that may be delivered more than
// once (an S3 event): the first recording under the key once records the
// scan; any other, concurrent or later, records nothing and returns that
// scan, with recorded false. An empty key records every time.
func (s *Store) RecordScanOnce(ctx context.Context, ns scangate.NewScan, now time.Time, once string) (scangate.Scan, scangate.PR, bool, error) {
	if once != "" {
		sc, pr, found, err := s.recordedOnce(ctx, once)
		if err != nil || found {
			return sc, pr, false, err
		}
	}
	sc, pr, err := s.record(ctx, ns, now, once)
	if failed(err, lOnce) { // a concurrent delivery recorded it first
		sc, pr, _, err = s.recordedOnce(ctx, once)
		return sc, pr, false, err
	}
	return sc, pr, err == nil, err
}

// recordedOnce reads the scan recorded under a once key, if any.
func (s *Store) recordedOnce(ctx context.Context, once string) (scangate.Scan, scangate.PR, bool, error) {
	it, err := s.getItem(ctx, "get recording key", onceKey(once))
	if err != nil || it == nil {
		return scangate.Scan{}, scangate.PR{}, false, err
	}
	sc, pr, err := s.Scan(ctx, getN(it, aScanID))
	return sc, pr, err == nil, err
}

func (s *Store) record(ctx context.Context, ns scangate.NewScan, now time.Time, once string) (scangate.Scan, scangate.PR, error) {
	id, err := s.nextID(ctx, "scan")
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	rows := recordingRows(id, ns)
	before, err := s.readGroups(ctx, rowGroups(rows))
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	for i := range rows {
		for j, g := range rows[i].groups {
			rows[i].by = rows[i].judged(j, before[g].covering(rows[i].ref))
		}
	}
	if err := s.putFindings(ctx, id, rows, ns.Findings, now); err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	sc, pr, err := s.commitScan(ctx, newScan(id, ns, rows, now), ns.PR, once)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	moved, err := s.settleRecording(ctx, rows, before)
	if err != nil || !moved {
		return sc, pr, err
	}
	return s.Scan(ctx, id)
}

// recordingRows are a new scan's findings as judgement sees them.
func recordingRows(scanID int64, ns scangate.NewScan) []findingRow {
	rows := make([]findingRow, len(ns.Findings))
	for i, f := range ns.Findings {
		ref := scangate.FindingRef{Type: ns.Type, Name: f.Name, RepoID: ns.RepoID, VcID: ns.VcID, Path: f.Path}
		if ns.Type == scangate.ScanVulnerability {
			ref.Aliases = f.Aliases
		}
		rows[i] = newRow(key(scanPK(scanID), findingSK(i)), scanID, ref, f.InSource)
	}
	return rows
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

// newScan is the scan record of a recording, its counts from its rows.
func newScan(id int64, ns scangate.NewScan, rows []findingRow, now time.Time) scangate.Scan {
	sc := scangate.Scan{
		ID: id, PRNumber: ns.PR.Number, VcID: ns.VcID, WebhookID: ns.WebhookID, RepoID: ns.RepoID,
		VcType: ns.VcType, Type: ns.Type, CreatedAt: scangate.At(now), VcName: ns.VcName, RepoName: ns.RepoName,
		Status: ns.Status, OtherDetails: ns.OtherDetails, StatURL: ns.StatURL,
	}
	if len(sc.OtherDetails) == 0 {
		sc.OtherDetails = json.RawMessage("{}")
	}
	suppressed := make([]bool, len(rows))
	for i, r := range rows {
		suppressed[i] = r.sup()
	}
	sc.SecretCount, sc.VulnerabilityCount = scangate.Counts(ns.Type, suppressed)
	sc.BlockStatus = scangate.Blocks(sc.Status, sc.SecretCount, sc.VulnerabilityCount)
	return sc
}

// commitScan puts the scan and creates or updates its PR record in one
// transaction. The first scan of a PR puts the record under
// attribute_not_exists; a racing first scan loses that condition, reads
// the record and updates it under its version instead.
func (s *Store) commitScan(ctx context.Context, sc scangate.Scan, pref scangate.PRRef, once string) (scangate.Scan, scangate.PR, error) {
	var pr scangate.PR
	var newPRID int64
	err := s.retry.Do(ctx, "record scan", func(int) (bool, error) {
		old, found, err := s.prRecord(ctx, sc.VcID, sc.RepoID, sc.PRNumber)
		if err != nil {
			return true, err
		}
		if !found {
			if newPRID == 0 {
				if newPRID, err = s.nextID(ctx, "pr"); err != nil {
					return true, err
				}
			}
			old = prRecord{PR: scangate.PR{ID: newPRID, Number: sc.PRNumber, RepoID: sc.RepoID, VcID: sc.VcID,
				WebhookID: sc.WebhookID, CreatedAt: sc.CreatedAt}}
		}
		sc.PRID = old.ID
		next, changed := old.with(sc, pref)
		t := s.newTx()
		t.put(lScan, scanItem(sc), when("attribute_not_exists("+ref(aPK)+")"))
		k := prKey(sc.VcID, sc.RepoID, sc.PRNumber)
		onPR := when("attribute_not_exists(" + ref(aPK) + ")")
		if found {
			onPR = when(ref(aVer)+" = :ver", ":ver", num(old.ver))
		}
		switch {
		case changed:
			next.ver = old.ver + 1
			t.put(lPR, next.item(), onPR)
		default: // the PR is unchanged, but it must still be as read
			t.check(lPR, k, onPR)
		}
		if !found {
			t.put(lPRID, prIDItem(next), nil)
		}
		if once != "" {
			it := merge(onceKey(once), item{aScanID: num(sc.ID), aTTL: num(sc.CreatedAt.Add(onceTTL).Unix())})
			t.put(lOnce, it, when("attribute_not_exists("+ref(aPK)+")"))
		}
		err = s.commit(ctx, "record scan", t)
		switch {
		case err == nil:
			pr = next.PR
			return true, nil
		case failed(err, lOnce):
			return true, err
		case lostRace(err, lPR):
			return false, nil
		}
		return true, err
	})
	return sc, pr, err
}

// settleRecording is the second half of the handshake: it reads the
// versions of the recording's groups again and, for each one that moved
// since before, settles the recording's findings of that group against
// its new rules. It reports whether any moved.
func (s *Store) settleRecording(ctx context.Context, rows []findingRow, before map[groupKey]group) (bool, error) {
	after, err := s.groupVersions(ctx, rowGroups(rows))
	if err != nil {
		return false, err
	}
	moved := false
	for g, v := range after {
		if v.gv == before[g].gv {
			continue
		}
		moved = true
		var mine []findingRow
		for _, r := range rows {
			if r.groupIndex(g) >= 0 {
				mine = append(mine, r)
			}
		}
		if err := s.reconcile(ctx, g, mine); err != nil {
			return true, err
		}
	}
	return moved, nil
}
