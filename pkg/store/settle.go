package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

// Re-evaluation writes findings' suppression in transactions of at most
// 100 items (DynamoDB's limit), txParallel at a time.
const (
	txMaxItems = 100
	unitRows   = 96 // finding updates per scan per transaction, leaving room for the scan, its PR and the group check
	txParallel = 8
)

// errSuperseded reports that the group changed while its findings were
// being judged: the judgement must start again from the new version.
var errSuperseded = errors.New("allowlist group changed")

// findingRow is one finding as re-evaluation sees it.
type findingRow struct {
	key    item
	scanID int64
	ref    scangate.FindingRef
	sup    bool
}

func rowFrom(it item) findingRow {
	return findingRow{
		key:    key(getS(it, "PK"), getS(it, "SK")),
		scanID: parseScanPK(getS(it, "PK")),
		ref: scangate.FindingRef{Type: scangate.ScanType(getS(it, "type")), Name: getS(it, "name"),
			RepoID: getN(it, "repo_id"), VcID: getN(it, "vc_id")},
		sup: getBool(it, "sup", false),
	}
}

func parseScanPK(pk string) int64 {
	var id int64
	_, _ = fmt.Sscanf(pk, "SCAN#%d", &id)
	return id
}

// groupRows lists the findings of a group through the index.
func (s *Store) groupRows(ctx context.Context, g group) ([]findingRow, error) {
	var rows []findingRow
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(GSI1),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: item{":pk": str(g.findings())},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, dbErr("list findings", err)
		}
		for _, it := range page.Items {
			rows = append(rows, rowFrom(it))
		}
	}
	return rows, nil
}

// settle re-evaluates the findings that the old or the new rule of one
// allowlist could match, and counts those the two rules judge differently.
func (s *Store) settle(ctx context.Context, old, new scangate.Rule) (scangate.Updated, error) {
	var upd scangate.Updated
	gs := []group{groupOf(new.Type, new.Name)}
	if old.Type != "" {
		if og := groupOf(old.Type, old.Name); og.pk() != gs[0].pk() {
			gs = append(gs, og)
		}
	}
	for _, g := range gs {
		rows, err := s.groupRows(ctx, g)
		if err != nil {
			return upd, err
		}
		for _, r := range rows {
			upd.Count(old, new, r.ref)
		}
		if err := s.reconcile(ctx, g, rows); err != nil {
			return upd, err
		}
	}
	return upd, nil
}

// reconcile makes the rows' suppression, their scans' counts and block
// status, and their PRs' counts agree with the group's current rules.
func (s *Store) reconcile(ctx context.Context, g group, rows []findingRow) error {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		gs, err := s.readGroups(ctx, []group{g})
		if err != nil {
			return err
		}
		err = s.apply(ctx, gs[0], rows)
		if !errors.Is(err, errSuperseded) {
			return err
		}
	}
	return scangate.Unavailable(fmt.Errorf("allowlist group %s: changed %d times while it was re-evaluated", g.pk(), maxAttempts))
}

// unit is the change of one scan within a transaction.
type unit struct {
	scan  scangate.Scan
	cver  int64
	rows  []int // indexes into the rows
	items []types.TransactWriteItem
}

// apply judges every row by the group g (read at version g.gv) and writes
// the changes, in rounds, until none is left. Every write is conditioned
// on the group still being at g.gv, on the finding's old suppression and on
// the scan's count version, so concurrent judgements never count twice.
func (s *Store) apply(ctx context.Context, g group, rows []findingRow) error {
	skip := map[int64]bool{} // scans not committed yet: their recorder settles them
	for round := 0; ; round++ {
		if round == maxAttempts {
			return scangate.Unavailable(fmt.Errorf("allowlist group %s: findings still changing after %d rounds", g.pk(), round))
		}
		byScan := map[int64][]int{}
		var scanIDs []int64
		for i, r := range rows {
			if r.sup != g.covers(r.ref) && !skip[r.scanID] {
				if byScan[r.scanID] == nil {
					scanIDs = append(scanIDs, r.scanID)
				}
				byScan[r.scanID] = append(byScan[r.scanID], i)
			}
		}
		if len(scanIDs) == 0 {
			return nil
		}
		units, err := s.plan(ctx, g, rows, scanIDs, byScan, skip)
		if err != nil {
			return err
		}
		if err := s.commitUnits(ctx, g, rows, units); err != nil {
			return err
		}
	}
}

// plan reads the scans and PRs of the changed rows and builds each scan's
// writes for this round.
func (s *Store) plan(ctx context.Context, g group, rows []findingRow, scanIDs []int64, byScan map[int64][]int, skip map[int64]bool) ([]unit, error) {
	keys := make([]item, len(scanIDs))
	for i, id := range scanIDs {
		keys[i] = scanKey(id)
	}
	scanItems, err := s.batchGetAll(ctx, "get scans", keys)
	if err != nil {
		return nil, err
	}
	scans := map[int64]item{}
	prKeys := map[string]item{}
	for _, it := range scanItems {
		sc := scanFrom(it)
		scans[sc.ID] = it
		k := prKey(sc.VcID, sc.RepoID, sc.PRNumber)
		prKeys[getS(k, "PK")] = k
	}
	var pk []item
	for _, k := range prKeys {
		pk = append(pk, k)
	}
	prItems, err := s.batchGetAll(ctx, "get PRs", pk)
	if err != nil {
		return nil, err
	}
	prs := map[string]prRecord{}
	for _, it := range prItems {
		prs[getS(it, "PK")] = prFrom(it)
	}
	var units []unit
	for _, id := range scanIDs {
		it, ok := scans[id]
		if !ok {
			skip[id] = true
			continue
		}
		u := unit{scan: scanFrom(it), cver: getN(it, "cver")}
		idx := byScan[id]
		u.rows = idx[:min(len(idx), unitRows)]
		sec, vul := u.scan.SecretCount, u.scan.VulnerabilityCount
		for _, i := range u.rows {
			d := int64(1)
			if !rows[i].sup {
				d = -1 // becomes suppressed
			}
			if rows[i].ref.Type == scangate.ScanSecret {
				sec += d
			} else {
				vul += d
			}
			u.items = append(u.items, types.TransactWriteItem{Update: &types.Update{
				TableName: &s.table, Key: rows[i].key,
				UpdateExpression:          aws.String("SET sup = :new"),
				ConditionExpression:       aws.String("sup = :old"),
				ExpressionAttributeValues: item{":new": boolean(!rows[i].sup), ":old": boolean(rows[i].sup)},
			}})
		}
		cond := "cver = :cv"
		if u.cver == 0 {
			cond = "attribute_not_exists(cver) OR cver = :cv"
		}
		u.items = append(u.items, types.TransactWriteItem{Update: &types.Update{
			TableName: &s.table, Key: scanKey(id),
			UpdateExpression:    aws.String("SET secret_count = :s, vulnerability_count = :v, block_status = :b, cver = :next"),
			ConditionExpression: aws.String(cond),
			ExpressionAttributeValues: item{":s": num(sec), ":v": num(vul), ":b": boolean(scangate.Blocks(u.scan.Status, sec, vul)),
				":cv": num(u.cver), ":next": num(u.cver + 1)},
		}})
		k := prKey(u.scan.VcID, u.scan.RepoID, u.scan.PRNumber)
		pr := prs[getS(k, "PK")]
		switch {
		case u.scan.Type == scangate.ScanSecret && pr.secScan == id:
			u.items = append(u.items, s.prCount(k, "sec_scan", "secret_count", id, sec))
		case u.scan.Type == scangate.ScanVulnerability && pr.vulnScan == id:
			u.items = append(u.items, s.prCount(k, "vuln_scan", "vulnerability_count", id, vul))
		}
		units = append(units, u)
	}
	return units, nil
}

// prCount sets a PR's count from its newest scan of that type, if that scan
// is still its newest; the version bump makes a racing scan recording
// re-read the record.
func (s *Store) prCount(k item, pointer, count string, scanID, n int64) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.table, Key: k,
		UpdateExpression:          aws.String("SET #c = :n ADD ver :one"),
		ConditionExpression:       aws.String("#p = :id"),
		ExpressionAttributeNames:  map[string]string{"#c": count, "#p": pointer},
		ExpressionAttributeValues: item{":n": num(n), ":one": num(1), ":id": num(scanID)},
	}}
}

// commitUnits packs units into transactions, each with a check that the
// group is still at g.gv, and runs them a few at a time. Rows of committed
// units take their new suppression; rows of refused ones are read again.
func (s *Store) commitUnits(ctx context.Context, g group, rows []findingRow, units []unit) error {
	var txs [][]unit
	var cur []unit
	n := 0
	for _, u := range units {
		if n+len(u.items)+1 > txMaxItems && len(cur) > 0 {
			txs = append(txs, cur)
			cur, n = nil, 0
		}
		cur = append(cur, u)
		n += len(u.items)
	}
	if len(cur) > 0 {
		txs = append(txs, cur)
	}
	check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: &s.table, Key: g.itemKey(),
		ConditionExpression:       aws.String("gv = :gv"),
		ExpressionAttributeValues: item{":gv": num(g.gv)},
	}}
	if g.gv == 0 {
		check.ConditionCheck.ConditionExpression = aws.String("attribute_not_exists(gv)")
		check.ConditionCheck.ExpressionAttributeValues = nil
	}
	var mu sync.Mutex
	var firstErr error
	var stale []int
	sem := make(chan struct{}, txParallel)
	var wg sync.WaitGroup
	for _, tx := range txs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			items := []types.TransactWriteItem{check}
			for _, u := range tx {
				items = append(items, u.items...)
			}
			_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
			codes := cancelReasons(err)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				for _, u := range tx {
					for _, i := range u.rows {
						rows[i].sup = !rows[i].sup
					}
				}
			case len(codes) > 0 && codes[0] == "ConditionalCheckFailed":
				if firstErr == nil {
					firstErr = errSuperseded
				}
			case codes != nil:
				// A finding, scan or PR changed under us, or a conflict:
				// read the findings again and plan the next round afresh.
				for _, u := range tx {
					stale = append(stale, u.rows...)
				}
			default:
				if firstErr == nil {
					firstErr = dbErr("re-evaluate findings", err)
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return s.refreshRows(ctx, rows, stale)
}

// refreshRows reads the suppression of some rows again, consistently.
func (s *Store) refreshRows(ctx context.Context, rows []findingRow, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	keys := make([]item, len(idx))
	at := map[string]int{}
	for j, i := range idx {
		keys[j] = rows[i].key
		at[getS(rows[i].key, "PK")+"|"+getS(rows[i].key, "SK")] = i
	}
	items, err := s.batchGetAll(ctx, "get findings", keys)
	if err != nil {
		return err
	}
	for _, it := range items {
		rows[at[getS(it, "PK")+"|"+getS(it, "SK")]].sup = getBool(it, "sup", false)
	}
	return nil
}

// batchGetAll reads any number of items, 100 keys a request.
func (s *Store) batchGetAll(ctx context.Context, op string, keys []item) ([]item, error) {
	var all []item
	for start := 0; start < len(keys); start += 100 {
		items, err := s.batchGet(ctx, op, keys[start:min(start+100, len(keys))])
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
	}
	return all, nil
}
