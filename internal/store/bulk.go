package store

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// BulkLoad records scans as RecordScans does, item for item (the findings
// and their alias entries judged by the allowlists as they are, the scans
// with their scan.record audit entries and scan.recorded events, the PR
// records with their gates judged by the policy and their
// pr.gate_changed, the PR id items; a PR scan with a base classified
// against its base branch's newest completed analysis of its pair (when
// it completed itself), with its ABSENT items and its PR's item under the
// base), but with BatchWriteItem alone,
// batchParallel batches at a time: no transaction, no handshake, no
// RECENT items. It is for a table that nothing else writes meanwhile:
// the benchmarks and tests that need a million findings in minutes,
// which the API (one transaction a recording) would take hours to
// write. It returns the scans' ids.
func (s *Store) BulkLoad(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time) ([]int64, error) {
	if len(nss) == 0 {
		return nil, nil
	}
	ids, err := s.nextIDs(ctx, "scan", len(nss))
	if err != nil {
		return nil, err
	}
	rows := make([][]findingRow, len(nss))
	var all []findingRow
	var repos []int64
	for i, ns := range nss {
		rows[i] = recordingRows(ids[i], 0, ns, ns.Findings)
		all = append(all, rows[i]...)
		repos = append(repos, ns.RepoID)
	}
	groups, err := s.readGroups(ctx, rowGroups(all))
	if err != nil {
		return nil, err
	}
	pol, err := s.readPolicies(ctx, repos)
	if err != nil {
		return nil, err
	}
	var reqs []types.WriteRequest
	scans := make([]scangate.Scan, len(nss))
	prKeys := make([]item, len(nss))
	bases := map[string]*bulkBaseline{}
	for i, ns := range nss {
		bl, err := s.bulkBaselineOf(ctx, bases, ns)
		if err != nil {
			return nil, err
		}
		judgeRows(rows[i], groups)
		puts, cl := bulkFindings(ids[i], ns, rows[i], bl)
		reqs = append(reqs, puts...)
		scans[i] = newScan(ids[i], ns, cl.sev, cl.newSev, pol.effective(ns.RepoID), now)
		if bl != nil {
			scans[i].Class = scangate.Classification{Classified: true, BaselineScanID: bl.scanID, BaselineSHA: bl.sha, Match: scangate.MatchNewest,
				New: cl.class.newN, Unchanged: cl.class.unch, Absent: cl.class.absent}
		}
		prKeys[i] = prKey(ns.VcID, ns.RepoID, ns.PR.Number)
	}
	more, err := s.bulkScans(ctx, nss, scans, prKeys, who, pol, now)
	if err != nil {
		return nil, err
	}
	return ids, s.writeAll(ctx, "load scans", append(reqs, more...))
}

// judgeRows judges a scan's finding rows by the allowlists of their
// groups as read.
func judgeRows(rows []findingRow, groups map[groupKey]group) {
	for k := range rows {
		r := &rows[k]
		for j, g := range r.groups {
			r.by, r.gvs[j] = r.judged(j, groups[g].covering(r.ref)), groups[g].gv
		}
	}
}

// bulkCounts are one scan's counts as BulkLoad classifies it: its
// findings per severity (not suppressed), its new ones, and its
// classification's counts.
type bulkCounts struct {
	sev, newSev scangate.SevCounts
	class       classes
}

// bulkFindings are the puts of one scan's findings (with their alias
// entries), each classified against bl when the scan has one, followed
// by the scan's ABSENT items against bl, and the scan's counts.
func bulkFindings(scanID int64, ns scangate.NewScan, rows []findingRow, bl *bulkBaseline) ([]types.WriteRequest, bulkCounts) {
	var reqs []types.WriteRequest
	var cl bulkCounts
	matched := map[identity]bool{}
	for k, r := range rows {
		items := findingItems(r, k, ns.Findings[k])
		isNew := true
		if bl != nil {
			f := ns.Findings[k]
			id := identityOf(f.Rule, f.Fingerprint)
			if _, ok := bl.ids[id]; ok && f.Fingerprint != "" {
				isNew, matched[id] = false, true
			}
			items[0][aBaselineState] = str(map[bool]string{true: scangate.BaselineNew, false: scangate.BaselineUnchanged}[isNew])
			if isNew {
				cl.class.newN++
			} else {
				cl.class.unch++
			}
		}
		for _, it := range items {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		if !r.sup() {
			cl.sev.Add(r.sev, 1)
			if isNew {
				cl.newSev.Add(r.sev, 1)
			}
		}
	}
	if bl != nil {
		for _, f := range bl.items {
			if fp := getS(f, aFP); fp != "" && matched[identityOf(getS(f, aRule), fp)] {
				continue
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: absentItem(scanID, bl.scanID, int(cl.class.absent), f)}})
			cl.class.absent++
		}
	}
	return reqs, cl
}

// writeAll writes reqs in batches, batchParallel at once.
func (s *Store) writeAll(ctx context.Context, op string, reqs []types.WriteRequest) error {
	w := s.newWriter(ctx, op)
	b := &batcher{w: w}
	for _, r := range reqs {
		if err := b.put(r); err != nil {
			_ = w.close() // the same error
			return err
		}
	}
	if err := b.flush(); err != nil {
		_ = w.close()
		return err
	}
	return w.close()
}

// bulkScans are the puts of BulkLoad's scans, with their audit entries,
// and of their PR records (and new PRs' id items).
func (s *Store) bulkScans(ctx context.Context, nss []scangate.NewScan, scans []scangate.Scan, prKeys []item, who scangate.Who,
	pol policies, now time.Time) ([]types.WriteRequest, error) {
	prs, err := s.prRecords(ctx, prKeys)
	if err != nil {
		return nil, err
	}
	read := maps.Clone(prs) // as read: the gates change from them
	var reqs []types.WriteRequest
	put := func(it item) { reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}) }
	for i, ns := range nss {
		pk := getS(prKeys[i], aPK)
		pr, found := prs[pk]
		if !found {
			id, err := s.nextID(ctx, "pr")
			if err != nil {
				return nil, err
			}
			pr = prRecord{PR: scangate.PR{ID: id, Number: ns.PR.Number, RepoID: ns.RepoID, VcID: ns.VcID, WebhookID: ns.WebhookID,
				CreatedAt: scans[i].CreatedAt}, cats: map[catKey]catScan{}}
			put(prIDItem(pr))
		}
		scans[i].PRID = pr.ID
		pr, _ = pr.with(scans[i], ns.PR)
		prs[pk] = pr
		put(scanItem(scans[i]))
		e := scangate.NewAudit(scangate.AuditScanRecord, who, scanTarget(scans[i].ID), scanChanges(scans[i]), now)
		e.ID = newULID(now)
		put(s.auditItem(e))
	}
	return append(reqs, s.bulkGates(read, prs, scans, prKeys, pol, now)...), nil
}

// bulkGates are the puts of BulkLoad's PR records (prs, with their scans;
// read, as they were read) judged by the policy, with their
// pr.gate_changed as putPR writes them, and of the scans' scan.recorded
// events.
func (s *Store) bulkGates(read, prs map[string]prRecord, scans []scangate.Scan, prKeys []item, pol policies, now time.Time) []types.WriteRequest {
	var reqs []types.WriteRequest
	put := func(it item) { reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}) }
	for pk, pr := range prs {
		pr, _ = pr.judge(pol.effective(pr.RepoID), scangate.At(now))
		t := s.newTx()
		prev, found := read[pk]
		prs[pk], _ = putPR(t, prev, found, pr, scangate.CauseScan)
		putBasePR(t, prev, found, prs[pk])
		for _, w := range t.items {
			if w.Delete != nil {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: w.Delete.Key}})
				continue
			}
			put(w.Put.Item)
		}
	}
	for i, sc := range scans {
		e := scangate.NewEvent(scangate.EventScanRecorded, sc.CreatedAt.Time, scangate.ViewScan(sc, prs[getS(prKeys[i], aPK)].asPR()))
		e.ID = newULID(sc.CreatedAt.Time)
		put(eventItem(e))
	}
	return reqs
}

// bulkBaseline is a baseline BulkLoad classifies against: the branch's
// newest completed analysis of a pair, its findings and their identities.
type bulkBaseline struct {
	scanID int64
	sha    string
	items  []item
	ids    map[identity]bool
}

// bulkBaselineOf is the baseline of a PR scan with a base (nil: none, or
// a scan without a base or that did not complete), read once per
// (repository, base, pair) into bases: the base branch's newest completed
// analysis of the pair (BulkLoad does not look for an exact one).
func (s *Store) bulkBaselineOf(ctx context.Context, bases map[string]*bulkBaseline, ns scangate.NewScan) (*bulkBaseline, error) {
	if ns.BaseRef == "" || ns.IsBranch() || !completed(ns.Status) {
		return nil, nil
	}
	k := catKeyOf(scangate.Scan{Type: ns.Type, Category: ns.Category})
	ck := fmt.Sprint(ns.VcID, "/", ns.RepoID, "/", ns.BaseRef, "/", k.attr())
	if b, ok := bases[ck]; ok {
		return b, nil
	}
	var bl *bulkBaseline
	br, found, err := s.branchRecordOf(ctx, ns.VcID, ns.RepoID, ns.BaseRef)
	if err != nil {
		return nil, err
	}
	if c, ok := br.bases[k]; ok && found {
		bl = &bulkBaseline{scanID: c.scanID, sha: c.sha, ids: map[identity]bool{}}
		bl.items, err = s.queryAll(ctx, "read baseline", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
			ExpressionAttributeValues: item{":pk": str(scanPK(c.scanID)), ":f": str(findingPrefix)},
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil {
			return nil, err
		}
		for _, it := range bl.items {
			if fp := getS(it, aFP); fp != "" {
				bl.ids[identityOf(getS(it, aRule), fp)] = true
			}
		}
	}
	bases[ck] = bl
	return bl, nil
}
