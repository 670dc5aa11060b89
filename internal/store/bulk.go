package store

import (
	"context"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// BulkLoad records scans as RecordScans does, item for item (the findings
// and their alias entries judged by the allowlists as they are, the scans
// with their scan.record audit entries and scan.recorded events, the PR
// records with their gates judged by the policy and their
// pr.gate_changed, the PR id items), but with BatchWriteItem alone,
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
	for i, ns := range nss {
		for k := range rows[i] {
			r := &rows[i][k]
			for j, g := range r.groups {
				r.by, r.gvs[j] = r.judged(j, groups[g].covering(r.ref)), groups[g].gv
			}
		}
		var sev scangate.SevCounts
		for k, r := range rows[i] {
			for _, it := range findingItems(r, k, ns.Findings[k]) {
				reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
			}
			if !r.sup() {
				sev.Add(r.sev, 1)
			}
		}
		scans[i] = newScan(ids[i], ns, sev, pol.effective(ns.RepoID), now)
		prKeys[i] = prKey(ns.VcID, ns.RepoID, ns.PR.Number)
	}
	more, err := s.bulkScans(ctx, nss, scans, prKeys, who, pol, now)
	if err != nil {
		return nil, err
	}
	return ids, s.writeAll(ctx, "load scans", append(reqs, more...))
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
		for _, w := range t.items {
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
