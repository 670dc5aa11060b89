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
// its PR's record when it is the PR's newest scan of its pair, with the
// PR's pr.gate_changed when its decision changes (eventReserve): at most
// unitRows+3 items. A scan with more findings to change takes several
// steps, one after the other; the steps of different scans share
// transactions, sent one at a time.
const unitRows = txMaxItems - 3 - eventReserve

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
// (each finding once). The gate changes it makes are of cause (an
// allowlist's change or its expiry).
func (s *Store) settle(ctx context.Context, old, new scangate.Rule, cause string, now time.Time) (scangate.Updated, error) {
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
		if err := s.reconcile(ctx, g, rows, cause, now); err != nil {
			return upd, err
		}
	}
	return upd, nil
}

// reconcile makes the rows' judgement by group g, their scans' counts and
// block status, and their PRs' counts and gates agree with the group's
// current rules, starting again from a new snapshot whenever the group
// moves. Then, the handshake with policy changes: if the policy version
// is not the one every write was judged by, the PRs written are judged
// again. The gate changes it makes are of cause.
func (s *Store) reconcile(ctx context.Context, g groupKey, rows []findingRow, cause string, now time.Time) error {
	w := &written{prs: map[string]item{}, pvs: map[int64]bool{}, cause: cause}
	err := s.retry.Do(ctx, "re-evaluate "+g.pk(), func(int) (bool, error) {
		gs, err := s.readGroups(ctx, []groupKey{g})
		if err != nil {
			return true, err
		}
		err = s.apply(ctx, gs[g], rows, w, now)
		if errors.Is(err, errSuperseded) {
			return false, nil
		}
		return true, err
	})
	if err != nil || len(w.prs) == 0 {
		return err
	}
	pv, err := s.policyVersion(ctx)
	if err != nil || len(w.pvs) == 1 && w.pvs[pv] {
		return err
	}
	keys := make([]item, 0, len(w.prs))
	for _, k := range w.prs {
		keys = append(keys, k)
	}
	_, err = s.rejudge(ctx, keys, now)
	return err
}

// written is what a re-evaluation wrote of PR records: their keys, and
// the policy versions it judged them by; and the cause of its gate
// changes.
type written struct {
	prs   map[string]item
	pvs   map[int64]bool
	cause string
}

// apply judges every row by the snapshot g and writes the changes, in
// rounds until none is left: a round plans every scan's steps from fresh
// reads of the scans and PRs, and a step refused because a finding, scan
// or PR moved sends that scan's rows to be read again for the next round.
func (s *Store) apply(ctx context.Context, g group, rows []findingRow, w *written, now time.Time) error {
	skip := map[int64]bool{} // scans not committed yet: their recorder settles them
	return s.retry.Do(ctx, "apply "+g.pk(), func(int) (bool, error) {
		pending, scanIDs := s.pending(g, rows, skip)
		if len(scanIDs) == 0 {
			return true, nil
		}
		chains, err := s.plan(ctx, g, rows, pending, scanIDs, skip, w, now)
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

// unit is one step of one scan: new judgements of some of its findings,
// the scan's counts after them, and its PR's when it is the PR's newest
// of its pair.
type unit struct {
	scanID int64
	rows   []int             // indexes into the rows
	by     []map[int][]int64 // each row's new judgement
	t      *tx
}

// size is the items the step takes in a transaction (its PR's event
// among them, when it has one).
func (u unit) size() int { return u.t.len() }

// plan reads the scans and PRs of the pending rows and the gate policy
// of their repositories, and builds the chains of steps: one chain per
// PR, its scans' steps one after the other, since two steps of one PR
// must not write its record in one transaction (nor under one version).
func (s *Store) plan(ctx context.Context, g group, rows []findingRow, pending map[int64][]int, scanIDs []int64, skip map[int64]bool, w *written, now time.Time) ([][]unit, error) {
	scanItems, prs, err := s.scansAndPRs(ctx, scanIDs)
	if err != nil {
		return nil, err
	}
	pol, err := s.readPolicies(ctx, reposOf(prs))
	if err != nil {
		return nil, err
	}
	w.pvs[pol.pv] = true
	var order []string
	byPR := map[string][]int64{}
	for _, id := range scanIDs {
		it, ok := scanItems[id]
		if !ok {
			skip[id] = true
			continue
		}
		sc := scanFrom(it)
		pk := getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), aPK)
		if byPR[pk] == nil {
			order = append(order, pk)
		}
		byPR[pk] = append(byPR[pk], id)
	}
	var chains [][]unit
	for _, pk := range order {
		pr := prs[pk]
		var units []unit
		for _, id := range byPR[pk] {
			it := scanItems[id]
			var us []unit
			us, pr = s.chain(g, rows, pending[id], scanFrom(it), getN(it, aCountVer), pr, pol.effective(pr.RepoID), w.cause, now)
			units = append(units, us...)
		}
		if pr.ver != prs[pk].ver {
			w.prs[pk] = prKey(pr.VcID, pr.RepoID, pr.Number)
		}
		chains = append(chains, units)
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
	prs, err := s.prRecords(ctx, prKeys)
	return scans, prs, err
}

// chain builds the steps of one scan: each step's finding updates, and
// the scan's counts and block status (by the policy p) and its PR's
// record, when it is the PR's newest of its pair, as they stand after
// the step, under the count version (and PR version) the previous step
// leaves; a step that changes the PR's decision carries its event, of
// cause. It returns the PR record as its last step leaves it.
func (s *Store) chain(g group, rows []findingRow, idx []int, sc scangate.Scan, cver int64, pr prRecord, p scangate.Policy, cause string, now time.Time) ([]unit, prRecord) {
	var units []unit
	sev := sc.Sev
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
				sev.Add(r.sev, d)
			}
			u.rows, u.by = append(u.rows, i), append(u.by, by)
			setJudgement(u.t, r, by)
		}
		if moved {
			block := p.ScanBlocks(sc.Type, sc.Status, sev)
			setCounts(u.t, sc, cver, sev, block)
			cver++
			if pr.newest(sc) {
				next := pr.withSev(catKeyOf(sc), sev, block, cver)
				next, _ = next.judge(p, scangate.At(now))
				pr, _ = putPR(u.t, pr, true, next, cause)
			}
		}
		units = append(units, u)
	}
	return units, pr
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

// setCounts writes a scan's counts (per severity and their sums) and
// block status under its count version.
func setCounts(t *tx, sc scangate.Scan, cver int64, sev scangate.SevCounts, block bool) {
	c := when(ref(aCountVer)+" = :cv", ":cv", num(cver))
	if cver == 0 {
		c = when("attribute_not_exists("+ref(aCountVer)+") OR "+ref(aCountVer)+" = :cv", ":cv", num(cver))
	}
	secrets, vulns := scangate.CategoryScan{Type: sc.Type, Sev: sev}.Counts()
	t.update(lCounts, scanKey(sc.ID),
		"SET "+ref(aSecretCount)+" = :s, "+ref(aVulnCount)+" = :v, "+ref(aSev)+" = :sev, "+ref(aBlockStatus)+" = :b, "+ref(aCountVer)+" = :next",
		item{":s": num(secrets), ":v": num(vulns), ":sev": sevAttr(sev), ":b": boolean(block), ":next": num(cver + 1)}, c)
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
		size := chains[c][step].size()
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
