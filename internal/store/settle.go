package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// Re-evaluation writes a group's judgement of its findings, and the counts
// and block status that follow, in transactions of at most txMaxItems
// items. A unit is one step of one scan: up to unitRows finding updates
// (each conditioned on the finding's version), the scan's new counts
// (conditioned on its count version) and its PR's record when it is the
// PR's newest scan of its pair (conditioned on the PR's version), with
// its pr.gate_changed when the gate changes (putPR adds it; the packing
// keeps room for it, eventReserve): at most unitRows+3 items. A scan with more
// findings to change takes several units, one after the other; units of
// different scans are packed into transactions, and the transactions of
// one wave are sent side by side: no two of them share an item, and no
// transaction holds a check of the group's version (DynamoDB cancels
// transactions in flight together that include the same item, a
// condition check included). What keeps a slower writer from undoing a
// newer judgement is each finding's own record of the group version its
// judgement was made at (gvs): a writer never overwrites a judgement made
// at a newer version, and after committing it reads the group's version
// again and judges what it wrote again if the version moved (settleRows).
const unitRows = txMaxItems - 4

// judgeParallel is how many transactions of one wave are in flight at
// once.
const judgeParallel = batchParallel

// Labels of re-evaluation transactions.
const (
	lFinding = "finding"
	lCounts  = "counts"
)

// settleRows makes the rows' judgement by group g agree with its rules:
// it judges them by snap (a snapshot of g; nil reads the current one),
// then reads g's version again, with the policy's, in one BatchGetItem.
// While g moved, the rows it wrote are judged again by a new snapshot: a
// change whose work read them before these writes may have passed them
// over. If the policy moved, the PRs written are judged again
// (rejudge). It reports whether g had moved past snap's version (the
// caller's work is superseded).
func (s *Store) settleRows(ctx context.Context, g groupKey, snap *group, rows []findingRow, cause string, now time.Time) (bool, error) {
	w := &written{prs: map[string]item{}, pvs: map[int64]bool{}}
	moved := false
	for {
		if snap == nil {
			sn, err := s.snapshot(ctx, g)
			if err != nil {
				return moved, err
			}
			snap = &sn
		}
		wrote, err := s.judgeRows(ctx, *snap, rows, cause, w, now)
		if err != nil || len(wrote) == 0 && len(w.prs) == 0 {
			return moved, err // nothing written: nothing to judge again
		}
		versions, pv, err := s.readVersions(ctx, []groupKey{g}, []item{globalPolicyKey()})
		if err != nil {
			return moved, err
		}
		if versions[g].gv != snap.gv {
			moved, snap = true, nil
			rows = pick(rows, wrote)
			if len(rows) > 0 {
				continue
			}
		}
		if len(w.prs) == 0 || len(w.pvs) == 1 && w.pvs[pv] {
			return moved, nil
		}
		keys := make([]item, 0, len(w.prs))
		for _, k := range w.prs {
			keys = append(keys, k)
		}
		_, err = s.rejudge(ctx, keys, now)
		return moved, err
	}
}

// pick returns the rows at the indexes idx.
func pick(rows []findingRow, idx []int) []findingRow {
	out := make([]findingRow, len(idx))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out
}

// written is what a re-evaluation wrote of PR records: their keys, and
// the policy versions it judged them by.
type written struct {
	prs map[string]item
	pvs map[int64]bool
}

// judgeRows judges every row by the snapshot g and writes what changed,
// in rounds until nothing is left: a round plans every scan's units from
// fresh reads of the scans and PRs, and a unit refused because a finding,
// scan or PR moved sends its rows to be read again for the next round. A
// row whose judgement by g was made at a newer version of g is left as
// it is. It returns the indexes of the rows it wrote.
func (s *Store) judgeRows(ctx context.Context, g group, rows []findingRow, cause string, w *written, now time.Time) ([]int, error) {
	skip := map[int64]bool{} // scans not committed yet: their recorder settles them
	var wrote []int
	err := s.retry.Do(ctx, "judge "+g.pk(), func(int) (bool, error) {
		pending, scanIDs := pendingRows(g, rows, skip)
		if len(scanIDs) == 0 {
			return true, nil
		}
		chains, err := s.plan(ctx, rows, pending, scanIDs, skip, w)
		if err != nil {
			return true, err
		}
		done, stale, err := s.runChains(ctx, g, rows, chains, cause, now)
		wrote = append(wrote, done...)
		if err != nil {
			return true, err
		}
		// Done when every unit committed; else the refused rows are read
		// again for the next round.
		return len(stale) == 0, s.refreshRows(ctx, rows, stale)
	})
	return wrote, err
}

// pendingRows groups by scan the rows whose judgement by g is not g's and
// was made at g's version or an older one.
func pendingRows(g group, rows []findingRow, skip map[int64]bool) (map[int64][]int, []int64) {
	pending := map[int64][]int{}
	var scanIDs []int64
	for i, r := range rows {
		j := r.groupIndex(g.groupKey)
		if j < 0 || skip[r.scanID] || r.gvs[j] > g.gv || slices.Equal(r.by[j], g.covering(r.ref)) {
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
// the scan's counts after them, and its PR's record when it is the PR's
// newest of its pair.
type unit struct {
	rows  []int             // indexes into the rows
	by    []map[int][]int64 // each row's new judgement
	t     *tx
	bytes int // at most what its items weigh against txMaxBytes
}

// size is the items the unit takes in a transaction (its PR's event
// among them, when it has one).
func (u unit) size() int { return u.t.len() }

// chain is what is left to write of the scans whose units must follow
// one another: one scan (its counts move under its count version), or
// the newest scans of one PR (their units write its record too, under its
// version). Its units are cut as the transactions fill (next), so that
// small scans share transactions and a large one fills them.
type chain struct {
	scans []scanLeft
	pr    prRecord // the PR record as the units cut so far leave it
	p     scangate.Policy
}

// scanLeft is what is left to write of one scan: its rows not in a unit
// yet, and its counts and count version as the units cut so far leave
// them.
type scanLeft struct {
	sc   scangate.Scan
	cver int64
	idx  []int
	size int // the scan item's size as read
}

// overhead is the most items a unit of the chain takes beside its
// findings: the scan's counts, and its PR record with the event's room.
func (c *chain) overhead() int {
	if c.pr.newest(c.scans[0].sc) {
		return 2 + eventReserve
	}
	return 1
}

// overheadBytes bounds the bytes a unit of the chain takes beside its
// findings: the scan's item, and its PR record and the event's (the
// event's gate is the record's, so no larger than it).
func (c *chain) overheadBytes() int {
	if c.pr.newest(c.scans[0].sc) {
		return c.scans[0].size + 2*itemSize(c.pr.item())
	}
	return c.scans[0].size
}

// judgementSlack bounds how much a new judgement may grow a finding's
// item: its covering ids of one group.
const judgementSlack = maxCovering*12 + 64

// whole reports whether the chain's next unit writes its PR record and
// can hold all its scan's rows left: such a scan is not cut to fill a
// transaction, since each unit that writes the PR record may change its
// gate (the reasons' counts) and leave a pr.gate_changed: a scan of up to
// unitRows findings to change is one gate change.
func (c *chain) whole() bool {
	return c.pr.newest(c.scans[0].sc) && len(c.scans[0].idx) <= unitRows
}

// plan reads the scans and PRs of the pending rows and the gate policy
// of their repositories, and makes the chains: one for the newest scans
// of each PR, since two units that write one PR's record must not be in
// one transaction (nor under one version); one for each other scan.
func (s *Store) plan(ctx context.Context, rows []findingRow, pending map[int64][]int, scanIDs []int64, skip map[int64]bool, w *written) ([]*chain, error) {
	scanItems, prs, err := s.scansAndPRs(ctx, scanIDs)
	if err != nil {
		return nil, err
	}
	pol, err := s.readPolicies(ctx, reposOf(prs))
	if err != nil {
		return nil, err
	}
	w.pvs[pol.pv] = true
	newest := map[string]*chain{}
	var chains []*chain
	for _, id := range scanIDs {
		it, ok := scanItems[id]
		if !ok {
			skip[id] = true
			continue
		}
		sc := scanFrom(it)
		pk := getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), aPK)
		part := scanLeft{sc: sc, cver: getN(it, aCountVer), idx: pending[id], size: itemSize(it)}
		pr := prs[pk]
		c := newest[pk]
		switch {
		case !pr.newest(sc): // its units write no PR record
			c = &chain{pr: pr, p: pol.effective(pr.RepoID)}
			chains = append(chains, c)
		case c == nil:
			c = &chain{pr: pr, p: pol.effective(pr.RepoID)}
			newest[pk] = c
			chains = append(chains, c)
			w.prs[pk] = prKey(pr.VcID, pr.RepoID, pr.Number)
		}
		c.scans = append(c.scans, part)
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

// next cuts the chain's next unit: up to max of its current scan's rows
// (at least one, and as many as fit in maxBytes with the unit's
// overhead), judged by g, the scan's counts and block status (by the chain's
// policy) and its PR's record, when it is the PR's newest of its pair, as
// they stand after the unit, under the count version (and PR version)
// the previous unit leaves.
func (c *chain) next(s *Store, g group, rows []findingRow, max, maxBytes int, cause string, now time.Time) unit {
	sp := &c.scans[0]
	u := unit{t: s.newTx(), bytes: c.overheadBytes()}
	take := sp.idx[:min(max, len(sp.idx))]
	for k, i := range take {
		if size := rows[i].size + judgementSlack; k == 0 || u.bytes+size <= maxBytes {
			u.bytes += size
			continue
		}
		take = take[:k]
		break
	}
	sp.idx = sp.idx[len(take):]
	moved := false
	for _, i := range take {
		r := rows[i]
		j := r.groupIndex(g.groupKey)
		by := r.judged(j, g.covering(r.ref))
		if was, is := r.sup(), r.src || len(by) > 0; was != is {
			moved = true
			d := int64(1) // no longer suppressed
			if is {
				d = -1
			}
			sp.sc.Sev.Add(r.sev, d)
		}
		u.rows, u.by = append(u.rows, i), append(u.by, by)
		setJudgement(u.t, r, j, g.gv, by)
	}
	if moved {
		block := c.p.ScanBlocks(sp.sc.Type, sp.sc.Status, sp.sc.Sev)
		setCounts(u.t, sp.sc, sp.cver, sp.sc.Sev, block)
		sp.cver++
		if c.pr.newest(sp.sc) {
			next := c.pr.withSev(catKeyOf(sp.sc), sp.sc.Sev, block, sp.cver)
			next, _ = next.judge(c.p, scangate.At(now))
			c.pr, _ = putPR(u.t, c.pr, true, next, cause)
		}
	}
	if len(sp.idx) == 0 {
		c.scans = c.scans[1:]
	}
	return u
}

// staleRows are the rows of a chain not written: those of its unit that
// was refused, and all it has left.
func (c *chain) staleRows(u unit) []int {
	out := slices.Clone(u.rows)
	for _, sp := range c.scans {
		out = append(out, sp.idx...)
	}
	return out
}

// setJudgement writes a finding's new judgement, its group j's made at
// version gv, under the finding's version.
func setJudgement(t *tx, r findingRow, j int, gv int64, by map[int][]int64) {
	c := when(ref(aFindVer)+" = :fv", ":fv", num(r.fv))
	if r.fv == 0 {
		c = when("attribute_not_exists(" + ref(aFindVer) + ")")
	}
	vals := item{":sup": boolean(r.src || len(by) > 0), ":next": num(r.fv + 1), ":by": byAttr(by), ":gvs": gvsAttr(withGV(r.gvs, j, gv))}
	set := "SET " + ref(aSup) + " = :sup, " + ref(aFindVer) + " = :next, " + ref(aBy) + " = :by, " + ref(aJudgedAt) + " = :gvs"
	t.update(lFinding, r.key, set, vals, c)
}

// withGV returns judgement versions with group j's set to gv.
func withGV(gvs map[int]int64, j int, gv int64) map[int]int64 {
	out := make(map[int]int64, len(gvs)+1)
	for k, v := range gvs {
		out[k] = v
	}
	out[j] = gv
	return out
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

// minSplit is the fewest findings of a scan a unit is cut to, so as to
// fill a transaction another unit has begun (each cut costs one more
// write of the scan's counts).
const minSplit = 8

// runChains commits the chains unit by unit: a wave holds the next unit
// of every live chain, cut to fill transactions of at most txMaxItems
// items, sent judgeParallel at a time (no two share an item). A chain
// whose transaction is refused stops; its rows from that unit on are
// returned as stale. It returns the rows written and the rows stale.
func (s *Store) runChains(ctx context.Context, g group, rows []findingRow, chains []*chain, cause string, now time.Time) ([]int, []int, error) {
	var wrote, stale []int
	for {
		packs := s.wave(g, rows, chains, cause, now)
		if len(packs) == 0 {
			return wrote, stale, nil
		}
		done, refused, err := s.commitWave(ctx, g, rows, packs)
		wrote = append(wrote, done...)
		if err != nil {
			return wrote, nil, err
		}
		for _, r := range refused {
			stale = append(stale, r.c.staleRows(r.u)...)
			r.c.scans = nil // the chain stops
		}
	}
}

// wave cuts the next unit of every live chain and packs the units into
// transactions of at most txMaxItems items and txMaxBytes bytes (the
// items a finding's update or a scan's counts update weigh whole, as
// DynamoDB counts them: a scan of large findings takes fewer a unit).
func (s *Store) wave(g group, rows []findingRow, chains []*chain, cause string, now time.Time) [][]cut {
	var packs [][]cut
	var cur []cut
	n, b := 0, 0
	for _, c := range chains {
		if len(c.scans) == 0 {
			continue
		}
		over, first := c.overhead(), c.overheadBytes()+rows[c.scans[0].idx[0]].size+judgementSlack
		if room := txMaxItems - n - over; len(cur) > 0 && (room < minSplit || b+first > txMaxBytes || c.whole() && len(c.scans[0].idx) > room) {
			packs, cur, n, b = append(packs, cur), nil, 0, 0
		}
		u := c.next(s, g, rows, min(unitRows, txMaxItems-n-over), txMaxBytes-b, cause, now)
		cur, n, b = append(cur, cut{c, u}), n+u.size(), b+u.bytes
	}
	if len(cur) > 0 {
		packs = append(packs, cur)
	}
	return packs
}

// cut is a unit cut from a chain.
type cut struct {
	c *chain
	u unit
}

// commitWave commits a wave's packs side by side, judgeParallel at a
// time, and returns the rows written and the units refused.
func (s *Store) commitWave(ctx context.Context, g group, rows []findingRow, packs [][]cut) ([]int, []cut, error) {
	var mu sync.Mutex
	var wrote []int
	var refused []cut
	err := parallel(ctx, judgeParallel, packs, func(ctx context.Context, pack []cut) error {
		t := s.newTx()
		for _, k := range pack {
			t.items, t.labels = append(t.items, k.u.t.items...), append(t.labels, k.u.t.labels...)
		}
		err := s.commit(ctx, "re-evaluate findings", t)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			for _, k := range pack {
				for j, i := range k.u.rows {
					r := &rows[i]
					r.by, r.gvs, r.fv = k.u.by[j], withGV(r.gvs, r.groupIndex(g.groupKey), g.gv), r.fv+1
					wrote = append(wrote, i)
				}
			}
		case isCancelled(err): // a finding, scan or PR moved, or a conflict
			refused = append(refused, pack...)
		default:
			return err
		}
		return nil
	})
	return wrote, refused, err
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
		rows[i].by, rows[i].gvs, rows[i].fv, rows[i].size = byFrom(it), gvsFrom(it), getN(it, aFindVer), itemSize(it)
	}
	return nil
}
