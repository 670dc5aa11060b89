package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/scangate/scangate/pkg/scangate"
)

// Re-evaluation writes a group's judgement of its findings, and the counts
// and block status that follow, in transactions of at most txMaxItems
// items: each holds the condition that the group is still at the version
// judged by (1 item) and the steps of one or more scans. A step of a scan
// holds up to unitRows finding updates (each conditioned on the finding's
// version), the scan's new counts (conditioned on its count version) and
// its PR's count when it is the PR's newest scan of that type: at most
// unitRows+2 items. A scan with more findings to change takes several
// steps, one after the other; the steps of different scans share
// transactions, sent one at a time.
const unitRows = txMaxItems - 4

// Labels of re-evaluation transactions (the group check: lGroup).
const (
	lFinding = "finding"
	lCounts  = "counts"
	lPRCount = "pr count"
)

// errSuperseded reports that the group changed while its findings were
// being judged: the judgement must start again from the new version.
var errSuperseded = errors.New("allowlist group changed")

// settle re-evaluates the findings that the old or the new rule of one
// allowlist could match, and counts those the two rules judge differently
// (each finding once).
func (s *Store) settle(ctx context.Context, old, new scangate.Rule, now time.Time) (scangate.Updated, error) {
	var upd scangate.Updated
	old, new = old.Compiled(), new.Compiled() // they judge every finding of the group
	gs := []groupKey{groupOf(new.Type, new.Name)}
	if og := groupOf(old.Type, old.Name); old.Type != "" && og != gs[0] {
		gs = append(gs, og)
	}
	counted := map[string]bool{}
	for _, g := range gs {
		rows, err := s.groupRows(ctx, g, now)
		if err != nil {
			return upd, err
		}
		for _, r := range rows {
			if k := keyString(r.key); !counted[k] {
				counted[k] = true
				upd.Count(old, new, r.ref)
			}
		}
		if err := s.reconcile(ctx, g, rows); err != nil {
			return upd, err
		}
	}
	return upd, nil
}

// reconcile makes the rows' judgement by group g, their scans' counts and
// block status, and their PRs' counts agree with the group's current
// rules, starting again from a new snapshot whenever the group moves.
func (s *Store) reconcile(ctx context.Context, g groupKey, rows []findingRow) error {
	return s.retry.Do(ctx, "re-evaluate "+g.pk(), func(int) (bool, error) {
		gs, err := s.readGroups(ctx, []groupKey{g})
		if err != nil {
			return true, err
		}
		err = s.apply(ctx, gs[g], rows)
		if errors.Is(err, errSuperseded) {
			return false, nil
		}
		return true, err
	})
}

// apply judges every row by the snapshot g and writes the changes, in
// rounds until none is left: a round plans every scan's steps from fresh
// reads of the scans and PRs, and a step refused because a finding, scan
// or PR moved sends that scan's rows to be read again for the next round.
func (s *Store) apply(ctx context.Context, g group, rows []findingRow) error {
	skip := map[int64]bool{} // scans not committed yet: their recorder settles them
	return s.retry.Do(ctx, "apply "+g.pk(), func(int) (bool, error) {
		pending, scanIDs := s.pending(g, rows, skip)
		if len(scanIDs) == 0 {
			return true, nil
		}
		chains, err := s.plan(ctx, g, rows, pending, scanIDs, skip)
		if err != nil {
			return true, err
		}
		stale, err := s.runChains(ctx, g, rows, chains)
		if err != nil {
			return true, err
		}
		// Done when every step committed; else the refused rows are read
		// again for the next round.
		return len(stale) == 0, s.refreshRows(ctx, rows, stale)
	})
}

// pending groups by scan the rows whose judgement by g is not g's.
func (s *Store) pending(g group, rows []findingRow, skip map[int64]bool) (map[int64][]int, []int64) {
	pending := map[int64][]int{}
	var scanIDs []int64
	for i, r := range rows {
		j := r.groupIndex(g.groupKey)
		if j < 0 || skip[r.scanID] || slices.Equal(r.by[j], g.covering(r.ref)) {
			continue
		}
		if pending[r.scanID] == nil {
			scanIDs = append(scanIDs, r.scanID)
		}
		pending[r.scanID] = append(pending[r.scanID], i)
	}
	return pending, scanIDs
}

// unit is one step of one scan: new judgements of some of its findings
// and the scan's counts after them.
type unit struct {
	scanID int64
	rows   []int             // indexes into the rows
	by     []map[int][]int64 // each row's new judgement
	t      *tx
}

// plan reads the scans and PRs of the pending rows and builds each scan's
// chain of steps.
func (s *Store) plan(ctx context.Context, g group, rows []findingRow, pending map[int64][]int, scanIDs []int64, skip map[int64]bool) ([][]unit, error) {
	scanItems, prs, err := s.scansAndPRs(ctx, scanIDs)
	if err != nil {
		return nil, err
	}
	var chains [][]unit
	for _, id := range scanIDs {
		it, ok := scanItems[id]
		if !ok {
			skip[id] = true
			continue
		}
		sc := scanFrom(it)
		chains = append(chains, s.chain(g, rows, pending[id], sc, getN(it, aCountVer), prs[getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), aPK)]))
	}
	return chains, nil
}

// scansAndPRs reads scans (by id) and their PR records (by partition key).
func (s *Store) scansAndPRs(ctx context.Context, scanIDs []int64) (map[int64]item, map[string]prRecord, error) {
	keys := make([]item, len(scanIDs))
	for i, id := range scanIDs {
		keys[i] = scanKey(id)
	}
	items, err := s.batchGetAll(ctx, "get scans", keys)
	if err != nil {
		return nil, nil, err
	}
	scans := map[int64]item{}
	var prKeys []item
	for _, it := range items {
		sc := scanFrom(it)
		scans[sc.ID] = it
		prKeys = append(prKeys, prKey(sc.VcID, sc.RepoID, sc.PRNumber))
	}
	prItems, err := s.batchGetAll(ctx, "get PRs", prKeys)
	if err != nil {
		return nil, nil, err
	}
	prs := map[string]prRecord{}
	for _, it := range prItems {
		prs[getS(it, aPK)] = prFrom(it)
	}
	return scans, prs, nil
}

// chain builds the steps of one scan: each step's finding updates, and
// the scan's counts (and its PR's, when it is the PR's newest of its type)
// as they stand after the step, under the count version (and PR version)
// the previous step leaves.
func (s *Store) chain(g group, rows []findingRow, idx []int, sc scangate.Scan, cver int64, pr prRecord) []unit {
	var units []unit
	sec, vul := sc.SecretCount, sc.VulnerabilityCount
	for start := 0; start < len(idx); start += unitRows {
		u := unit{scanID: sc.ID, t: s.newTx()}
		moved := false
		for _, i := range idx[start:min(start+unitRows, len(idx))] {
			r := rows[i]
			by := r.judged(r.groupIndex(g.groupKey), g.covering(r.ref))
			if was, is := r.sup(), r.src || len(by) > 0; was != is {
				moved = true
				d := int64(1) // no longer suppressed
				if is {
					d = -1
				}
				if r.ref.Type == scangate.ScanSecret {
					sec += d
				} else {
					vul += d
				}
			}
			u.rows, u.by = append(u.rows, i), append(u.by, by)
			setJudgement(u.t, r, by)
		}
		if moved {
			setCounts(u.t, sc, cver, sec, vul)
			cver++
			if pr.newest(sc) {
				n := sec
				if sc.Type == scangate.ScanVulnerability {
					n = vul
				}
				pr = pr.withCounts(sc, n, scangate.Blocks(sc.Status, sec, vul))
				setPRCounts(u.t, pr)
				pr.ver++
			}
		}
		units = append(units, u)
	}
	return units
}

// setJudgement writes a finding's new judgement under its version.
func setJudgement(t *tx, r findingRow, by map[int][]int64) {
	c := when(ref(aFindVer)+" = :fv", ":fv", num(r.fv))
	if r.fv == 0 {
		c = when("attribute_not_exists(" + ref(aFindVer) + ")")
	}
	vals := item{":sup": boolean(r.src || len(by) > 0), ":next": num(r.fv + 1)}
	set := "SET " + ref(aSup) + " = :sup, " + ref(aFindVer) + " = :next"
	set += ", " + ref(aBy) + " = :by"
	vals[":by"] = byAttr(by)
	t.update(lFinding, r.key, set, vals, c)
}

// setCounts writes a scan's counts and block status under its count version.
func setCounts(t *tx, sc scangate.Scan, cver, sec, vul int64) {
	c := when(ref(aCountVer)+" = :cv", ":cv", num(cver))
	if cver == 0 {
		c = when("attribute_not_exists("+ref(aCountVer)+") OR "+ref(aCountVer)+" = :cv", ":cv", num(cver))
	}
	t.update(lCounts, scanKey(sc.ID),
		"SET "+ref(aSecretCount)+" = :s, "+ref(aVulnCount)+" = :v, "+ref(aBlockStatus)+" = :b, "+ref(aCountVer)+" = :next",
		item{":s": num(sec), ":v": num(vul), ":b": boolean(scangate.Blocks(sc.Status, sec, vul)), ":next": num(cver + 1)}, c)
}

// setPRCounts writes a PR's counts and block status, as its newest scans'
// re-evaluation leaves them, under the record's version (a racing
// recording or re-evaluation of the same PR makes this step start again).
func setPRCounts(t *tx, r prRecord) {
	t.update(lPRCount, prKey(r.VcID, r.RepoID, r.Number),
		"SET "+ref(aSecretCount)+" = :s, "+ref(aSecBlock)+" = :sb, "+ref(aVulnCount)+" = :v, "+ref(aVulnBlock)+" = :vb, "+
			ref(aBlocked)+" = :b, "+ref(aVer)+" = :next",
		item{":s": num(r.SecretCount), ":sb": boolean(r.secBlock), ":v": num(r.VulnerabilityCount), ":vb": boolean(r.vulnBlock),
			":b": boolean(r.blocked()), ":next": num(r.ver + 1)},
		when(ref(aVer)+" = :ver", ":ver", num(r.ver)))
}

// runChains commits the chains step by step: the step of every live chain
// at once, packed into transactions that each check the group's version.
// A chain whose transaction is refused stops; its rows from that step on
// are returned as stale.
func (s *Store) runChains(ctx context.Context, g group, rows []findingRow, chains [][]unit) ([]int, error) {
	var stale []int
	alive := make([]bool, len(chains))
	for c := range alive {
		alive[c] = true
	}
	for step := 0; ; step++ {
		var live []int
		for c, chain := range chains {
			if alive[c] && step < len(chain) {
				live = append(live, c)
			}
		}
		if len(live) == 0 {
			return stale, nil
		}
		refused, err := s.commitStep(ctx, g, rows, chains, live, step)
		if err != nil {
			return nil, err
		}
		for _, c := range refused {
			alive[c] = false
			for _, u := range chains[c][step:] {
				stale = append(stale, u.rows...)
			}
		}
	}
}

// commitStep commits one step of each live chain, packed into
// transactions sent one after the other, and returns the chains refused.
// One at a time, because every one of them checks the group's version:
// DynamoDB cancels transactions in flight together that include the same
// item, a condition check included (TestLoneChangeMeetsNoConflict).
func (s *Store) commitStep(ctx context.Context, g group, rows []findingRow, chains [][]unit, live []int, step int) ([]int, error) {
	var packs [][]int
	var cur []int
	n := 1 // the group check
	for _, c := range live {
		size := chains[c][step].t.len()
		if n+size > txMaxItems && len(cur) > 0 {
			packs, cur, n = append(packs, cur), nil, 1
		}
		cur, n = append(cur, c), n+size
	}
	packs = append(packs, cur)
	var refused []int
	for _, pack := range packs {
		t := s.newTx()
		groupCheck(t, g)
		for _, c := range pack {
			u := chains[c][step]
			t.items, t.labels = append(t.items, u.t.items...), append(t.labels, u.t.labels...)
		}
		err := s.commit(ctx, "re-evaluate findings", t)
		switch {
		case err == nil:
			for _, c := range pack {
				u := chains[c][step]
				for k, i := range u.rows {
					rows[i].by, rows[i].fv = u.by[k], rows[i].fv+1
				}
			}
		case failed(err, lGroup):
			return nil, errSuperseded
		case isCancelled(err): // a finding, scan or PR moved, or a conflict
			refused = append(refused, pack...)
		default:
			return nil, err
		}
	}
	return refused, nil
}

// refreshRows reads the judgement of some rows again, consistently.
func (s *Store) refreshRows(ctx context.Context, rows []findingRow, idx []int) error {
	if len(idx) == 0 {
		return nil
	}
	keys := make([]item, len(idx))
	at := map[string]int{}
	for j, i := range idx {
		keys[j] = rows[i].key
		at[keyString(rows[i].key)] = i
	}
	items, err := s.batchGetAll(ctx, "get findings", keys)
	if err != nil {
		return err
	}
	for _, it := range items {
		i := at[keyString(keyOf(it))]
		rows[i].by, rows[i].fv = byFrom(it), getN(it, aFindVer)
	}
	return nil
}
