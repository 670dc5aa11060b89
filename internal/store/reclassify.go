package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// When the base moves: a branch analysis that changes the branch's newest
// completed scan of a (type, category) writes, in its own transaction, a work item
// (kind baseline) that re-classifies every active pull request based on
// that branch whose newest scan of the category has a baseline that is
// not exact. The pull requests based on a branch are found through an
// item each PR record keeps in the branches' partition of its
// repository, written with the record whenever its base changes:
//
//	BRANCH#<vc>#<repo> / BASEPR#<sha256(name)[:32]>#<pr id>   pr_number
//
// A scan's ABSENT items are keyed by its baseline
// (ABSENT#<baseline>#<nnnnnn>): a re-classification writes those of the
// new baseline first (no reader sees them: readers take the baseline from
// the PR record), switches the scan and the PR record in one transaction
// (the findings whose state changes, the scan's counts and classification,
// the record with its gate and its pr.gate_changed, cause baseline), then
// deletes the ABSENT items of other baselines.

// basePRSK is the sort key of a PR's item under its base branch's name.
func basePRSK(name string, prID int64) string {
	return basePRPrefix(name) + fmt.Sprintf("%019d", prID)
}

func basePRPrefix(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "BASEPR#" + hex.EncodeToString(sum[:16]) + "#"
}

// lBasePR labels a PR's item under its base branch.
const lBasePR = "base pr"

// putBasePR adds to t the PR's item under its base branch when its base
// is new (and the deletion of the one under its former base).
func putBasePR(t *tx, old prRecord, found bool, next prRecord) {
	if next.BaseRef == "" || found && next.BaseRef == old.BaseRef {
		return
	}
	pk := branchesPK(next.VcID, next.RepoID)
	t.put(lBasePR, merge(key(pk, basePRSK(next.BaseRef, next.ID)), item{aPRNumber: num(next.Number)}), nil)
	if found && old.BaseRef != "" {
		t.del(lBasePR, key(pk, basePRSK(old.BaseRef, old.ID)), nil)
	}
}

// absentPrefix is the sort key prefix of a scan's ABSENT items against
// one baseline.
func absentPrefix(baseline int64) string { return fmt.Sprintf("ABSENT#%019d#", baseline) }

// KindBaseline is the kind of the work that re-classifies the pull
// requests based on a branch whose newest completed analysis of some
// categories moved.
const KindBaseline = scangate.WorkBaseline

// ActiveWindow is how recent a pull request's last scan must be for a
// move of its base to re-classify it.
const ActiveWindow = 30 * 24 * time.Hour

// baselineParams are a baseline work item's parameters: the branch, and
// its categories whose newest completed analysis moved (as
// <TYPE>#<category>).
type baselineParams struct {
	VcID   int64    `json:"vc"`
	RepoID int64    `json:"repo"`
	Name   string   `json:"name"`
	Cats   []string `json:"cats"`
}

// reclassRange is how many pull requests one step of a baseline work
// item re-classifies.
const reclassRange = 20

// reclassUnit is how many findings whose state changes one transaction
// of a re-classification writes, beside the scan, the PR record and its
// event.
const reclassUnit = txMaxItems - 4

// baselineWork re-classifies the pull requests based on a branch.
type baselineWork struct {
	s   *Store
	now func() time.Time
}

// Plan lists the pull requests based on the branch, by id, and cuts them
// into steps of reclassRange: the layout is the first PR id of each step.
func (b baselineWork) Plan(ctx context.Context, it work.Item) (work.Plan, error) {
	var p baselineParams
	if err := json.Unmarshal(it.Params, &p); err != nil {
		return work.Plan{}, fmt.Errorf("baseline work %d: %w", it.ID, err)
	}
	var firsts []int64
	n := 0
	err := b.s.queryPages(ctx, "list PRs of a base", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :p)"),
		ExpressionAttributeValues: item{":pk": str(branchesPK(p.VcID, p.RepoID)), ":p": str(basePRPrefix(p.Name))},
		ProjectionExpression:      aws.String(ref(aSK)),
		ConsistentRead:            aws.Bool(true),
	}, func(page []item) error {
		for _, it := range page {
			if n%reclassRange == 0 {
				firsts = append(firsts, basePRID(getS(it, aSK)))
			}
			n++
		}
		return nil
	})
	if err != nil {
		return work.Plan{}, err
	}
	layout, err := json.Marshal(firsts)
	if err != nil {
		return work.Plan{}, err
	}
	return work.Plan{Steps: len(firsts), Planned: work.Result{"prs": int64(n)}, Layout: layout, FanOut: len(firsts) > 1}, nil
}

func basePRID(sk string) int64 {
	id, _ := strconv.ParseInt(sk[strings.LastIndexByte(sk, '#')+1:], 10, 64)
	return id
}

// Step re-classifies the active pull requests of one range of ids.
func (b baselineWork) Step(ctx context.Context, it work.Item, n int) (work.Result, error) {
	var p baselineParams
	var firsts []int64
	if err := json.Unmarshal(it.Params, &p); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(it.Layout, &firsts); err != nil || n >= len(firsts) {
		return nil, fmt.Errorf("baseline work %d: no step %d in its layout", it.ID, n)
	}
	// The step's ids, from its first to the next step's (or the base's
	// last): every item between them is one of the base's BASEPR items.
	to := basePRPrefix(p.Name) + "~"
	if n+1 < len(firsts) {
		to = basePRSK(p.Name, firsts[n+1]-1) + "~"
	}
	items, err := b.s.queryAll(ctx, "list PRs of a base", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND " + ref(aSK) + " BETWEEN :from AND :to"),
		ExpressionAttributeValues: item{":pk": str(branchesPK(p.VcID, p.RepoID)), ":from": str(basePRSK(p.Name, firsts[n])), ":to": str(to)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	cats := make([]catKey, len(p.Cats))
	for i, c := range p.Cats {
		cats[i] = catKeyOfAttr(c)
	}
	res := work.Result{"prs": 0, "changed": 0}
	since := it.CreatedAt.Add(-ActiveWindow)
	for _, bp := range items {
		k := prKey(p.VcID, p.RepoID, getN(bp, aPRNumber))
		changed, err := b.s.reclassify(ctx, k, cats, p.Name, since, b.now())
		if err != nil {
			return nil, err
		}
		res["prs"]++
		if changed {
			res["changed"]++
		}
	}
	return res, nil
}

// target is the baseline a scan is to be classified against.
type target struct {
	scanID int64
	sha    string
	match  string
}

// reclassify re-classifies the newest scans of cats of the PR at k
// (every category when cats is nil) whose baseline is not exact against
// what it is now (baselineOf: the exact analysis of the base commit, else
// the base branch's newest completed one, else none), when the PR is based on base (any base
// when "") and its last scan is not older than since. Each scan switches
// in one transaction with the PR record and its gate (or, past
// reclassUnit findings changing, in units the last of which judges the
// gate): each changed PR's pr.gate_changed is written once. Then it reads
// the branch and the policy again, and starts over while either moved
// (the handshake with concurrent base scans and policy changes). It
// reports whether a gate changed.
func (s *Store) reclassify(ctx context.Context, k item, cats []catKey, base string, since, now time.Time) (bool, error) {
	changed := false
	for range 20 {
		recs, err := s.prRecords(ctx, []item{k})
		if err != nil {
			return changed, err
		}
		r, ok := recs[getS(k, aPK)]
		if !ok || r.BaseRef == "" || base != "" && r.BaseRef != base || r.LastScan.Before(since) {
			return changed, nil
		}
		b, _, err := s.branchRecordOf(ctx, r.VcID, r.RepoID, r.BaseRef)
		if err != nil {
			return changed, err
		}
		pol, err := s.readPolicies(ctx, []int64{r.RepoID})
		if err != nil {
			return changed, err
		}
		gate, moved, err := s.switchNext(ctx, k, r, b, categoriesOf(r, cats), pol, now)
		changed = changed || gate
		if err != nil {
			return changed, err
		}
		if moved {
			continue // the record moved: read it again
		}
		done, err := s.settled(ctx, k, r, b, pol, now)
		if err != nil || done {
			return changed, err
		}
	}
	return changed, fmt.Errorf("re-classify %s: its base kept moving", getS(k, aPK))
}

// categoriesOf is cats, or every category of r when cats is nil.
func categoriesOf(r prRecord, cats []catKey) []catKey {
	if cats != nil {
		return cats
	}
	var all []catKey
	for c := range r.cats {
		all = append(all, c)
	}
	return all
}

// switchNext goes through the categories todo of r (b being its base
// branch's record, as read): the newest scan of a category classified
// (not exactly) against the baseline it is to have has its other
// baselines' ABSENT items dropped; the first that is not is switched to
// it, and the pass ends there (the record moved). It reports whether the
// gate changed and whether a scan was switched.
func (s *Store) switchNext(ctx context.Context, k item, r prRecord, b branchRecord, todo []catKey, pol policies, now time.Time) (bool, bool, error) {
	for _, c := range todo {
		cs, ok := r.cats[c]
		if !ok || !cs.Class.Classified || cs.Class.Match == scangate.MatchExact || !completed(cs.Status) {
			continue
		}
		tg, err := s.targetOf(ctx, r, b, c)
		if err != nil {
			return false, false, err
		}
		if tg.scanID == cs.Class.BaselineScanID && tg.match == cs.Class.Match {
			if err := s.dropOtherAbsent(ctx, cs.ScanID, cs.Class.BaselineScanID); err != nil {
				return false, false, err
			}
			continue
		}
		gate, err := s.switchBaseline(ctx, k, c, tg, pol, now)
		if err != nil {
			return false, false, err
		}
		return gate, true, nil
	}
	return false, false, nil
}

// settled ends a pass of reclassify that switched nothing (b and pol as
// the pass read them): it reads the branch and the policy version again.
// When the policy moved, it re-judges the PR's gate; it reports the PR
// settled then, or when the branch did not move.
func (s *Store) settled(ctx context.Context, k item, r prRecord, b branchRecord, pol policies, now time.Time) (bool, error) {
	b2, _, err := s.branchRecordOf(ctx, r.VcID, r.RepoID, r.BaseRef)
	if err != nil {
		return true, err
	}
	pv, err := s.policyVersion(ctx)
	if err != nil {
		return true, err
	}
	if pv != pol.pv {
		_, err := s.rejudge(ctx, []item{k}, now)
		return true, err
	}
	return b2.ver == b.ver, nil
}

// targetOf is what the PR's newest scan of c is to be classified against
// now (baselineOf): the base branch's completed analysis of the PR's base
// commit (exact), else the branch's newest completed one (newest), else
// none; none too when that scan did not complete.
func (s *Store) targetOf(ctx context.Context, r prRecord, b branchRecord, c catKey) (target, error) {
	if b.id == 0 || !completed(r.cats[c].Status) {
		return target{}, nil
	}
	var exactID int64
	if r.BaseSHA != "" {
		it, err := s.getItem(ctx, "get base commit", commitKey(r.VcID, r.RepoID, b.id, c, r.BaseSHA))
		if err != nil {
			return target{}, err
		}
		exactID = getN(it, aScanID)
	}
	return baselineOf(b, c, exactID, r.BaseSHA), nil
}

// baselineFinding is what a re-classification keeps of a baseline's
// finding: its identity, and its item (for its ABSENT item).
type baselineFinding struct {
	id identity
	it item
}

// switchBaseline re-classifies the PR's newest scan of c against tg: it
// writes the ABSENT items against tg, then the findings whose state
// changes with the scan's counts and the PR record (the last unit judging
// its gate). A unit refused (a finding, the scan or the record moved)
// ends the switch with nothing reported: the caller reads again. It
// reports whether the gate's decision changed.
func (s *Store) switchBaseline(ctx context.Context, k item, c catKey, tg target, pol policies, now time.Time) (bool, error) {
	recs, err := s.prRecords(ctx, []item{k})
	if err != nil {
		return false, err
	}
	r := recs[getS(k, aPK)]
	cs := r.cats[c]
	scIt, err := s.getItem(ctx, "get scan", scanKey(cs.ScanID))
	if err != nil || scIt == nil {
		return false, err
	}
	sc := scanFrom(scIt)
	bl, ids, err := s.readBaselineFindings(ctx, tg.scanID)
	if err != nil {
		return false, err
	}
	st, err := s.reclassFindings(ctx, sc.ID, ids)
	if err != nil {
		return false, err
	}
	if st.class.absent, err = s.putAbsent(ctx, sc.ID, tg.scanID, bl, ids); err != nil {
		return false, err
	}
	sw := reclassSwitch{r: r, c: c, sc: sc, cver: getN(scIt, aCountVer), tg: tg, p: pol.effective(r.RepoID)}
	return sw.run(ctx, s, st, now)
}

// readBaselineFindings reads the findings of the baseline scan (none when
// 0), with their identities (each unmatched yet: false).
func (s *Store) readBaselineFindings(ctx context.Context, baseline int64) ([]baselineFinding, map[identity]bool, error) {
	var bl []baselineFinding
	ids := map[identity]bool{}
	if baseline == 0 {
		return bl, ids, nil
	}
	err := s.queryPages(ctx, "read baseline", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
		ExpressionAttributeValues: item{":pk": str(scanPK(baseline)), ":f": str(findingPrefix)},
		ProjectionExpression: aws.String(strings.Join([]string{ref(aSK), ref(aName), ref(aRule), ref(aPath), ref(aLine), ref(aSev),
			ref(aFP), ref(aFPSource), ref(aType), ref(aAliases)}, ", ")),
		ConsistentRead: aws.Bool(true),
	}, func(page []item) error {
		for _, it := range page {
			f := baselineFinding{it: it}
			if fp := getS(it, aFP); fp != "" {
				f.id = identityOf(getS(it, aRule), fp)
				ids[f.id] = false
			}
			bl = append(bl, f)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return bl, ids, nil
}

// reclassState is a scan's findings' states against a new baseline: the
// findings whose state changes, the classification's counts, and the new
// findings per severity (not suppressed).
type reclassState struct {
	changes []reclassChange
	class   classes
	newSev  scangate.SevCounts
}

// reclassFindings reads the scan's findings and judges their states
// against the baseline whose identities are ids, marking in ids those
// matched.
func (s *Store) reclassFindings(ctx context.Context, scan int64, ids map[identity]bool) (reclassState, error) {
	var st reclassState
	err := s.queryPages(ctx, "read findings", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
		ExpressionAttributeValues: item{":pk": str(scanPK(scan)), ":f": str(findingPrefix)},
		ProjectionExpression: aws.String(strings.Join([]string{ref(aPK), ref(aSK), ref(aRule), ref(aFP), ref(aBaselineState),
			ref(aSup), ref(aSev), ref(aFindVer)}, ", ")),
		ConsistentRead: aws.Bool(true),
	}, func(page []item) error {
		for _, it := range page {
			state := scangate.BaselineNew
			if fp := getS(it, aFP); fp != "" {
				id := identityOf(getS(it, aRule), fp)
				if _, ok := ids[id]; ok {
					ids[id], state = true, scangate.BaselineUnchanged
				}
			}
			sev, sup := severityOf(scangate.Severity(getS(it, aSev))), getBool(it, aSup, false)
			if state == scangate.BaselineNew {
				st.class.newN++
				if !sup {
					st.newSev.Add(sev, 1)
				}
			} else {
				st.class.unch++
			}
			if getS(it, aBaselineState) != state {
				st.changes = append(st.changes, reclassChange{key: keyOf(it), fv: getN(it, aFindVer), state: state, sev: sev, sup: sup})
			}
		}
		return nil
	})
	return st, err
}

// putAbsent writes the scan's ABSENT items against baseline (its findings
// bl not matched in ids), before anyone can read them, in transactions of
// puts (the work functions may put items, and nothing more). It returns
// how many it wrote.
func (s *Store) putAbsent(ctx context.Context, scan, baseline int64, bl []baselineFinding, ids map[identity]bool) (int64, error) {
	var n int64
	t := s.newTx()
	for _, f := range bl {
		if f.it[aFP] != nil && ids[f.id] {
			continue
		}
		t.put(lAbsent, absentItem(scan, baseline, int(n), f.it), nil)
		n++
		if t.len() == txMaxItems {
			if err := s.commitIdempotent(ctx, "put absent findings", t); err != nil {
				return n, err
			}
			t = s.newTx()
		}
	}
	if t.len() > 0 {
		if err := s.commitIdempotent(ctx, "put absent findings", t); err != nil {
			return n, err
		}
	}
	return n, nil
}

// commitIdempotent commits a transaction of unconditional, idempotent
// writes (the ABSENT items' puts, their retirement's updates), again
// after a conflict: another run of the same re-classification step (the
// scheduled function resuming a step the recording still runs) writes
// the same items at once, and the writes are the same whichever commits
// first.
func (s *Store) commitIdempotent(ctx context.Context, op string, t *tx) error {
	return s.retry.Do(ctx, op, func(int) (bool, error) {
		err := s.commit(ctx, op, t)
		var c *cancelled
		if errors.As(err, &c) && c.conflict && len(c.failed) == 0 {
			return false, nil
		}
		return true, err
	})
}

// reclassSwitch is the switch of the PR's (r, as read) newest scan of c
// (sc, at count version cver) to the baseline tg, its gate judged by p.
type reclassSwitch struct {
	r    prRecord
	c    catKey
	sc   scangate.Scan
	cver int64
	tg   target
	p    scangate.Policy
}

// run writes the findings whose state changes, unit by unit, with the
// scan's counts as they stand after each unit; the last unit judges the
// gate. A unit refused ends it with nothing reported. It reports whether
// the gate's decision changed, once the other baselines' ABSENT items
// are dropped.
func (w reclassSwitch) run(ctx context.Context, s *Store, st reclassState, now time.Time) (bool, error) {
	changes := st.changes
	r, cver := w.r, w.cver
	cur := w.sc
	unitNew := cur.NewSev
	decided := false
	for start := 0; start == 0 || start < len(changes); start += reclassUnit {
		part := changes[start:min(start+reclassUnit, len(changes))]
		last := start+reclassUnit >= len(changes)
		t := s.newTx()
		unitNew = updateChanges(t, part, unitNew)
		if last {
			unitNew = st.newSev
		}
		cur.NewSev = unitNew
		cur.Class = scangate.Classification{Classified: true, BaselineScanID: w.tg.scanID, BaselineSHA: w.tg.sha, Match: w.tg.match,
			New: st.class.newN, Unchanged: st.class.unch, Absent: st.class.absent}
		if !last { // the counts of a unit between: those of the findings it leaves
			cur.Class.New, cur.Class.Unchanged = countStates(w.sc.Class, changes[:start+len(part)])
		}
		block := w.p.ScanBlocks(cur.Type, cur.Status, cur.Sev, cur.NewSev)
		setClass(t, cur, cver, block)
		next := r.withSev(w.c, cur.Sev, cur.NewSev, block, cver+1)
		nc := next.cats[w.c]
		nc.Class = cur.Class
		next.cats[w.c] = nc
		if last {
			next, _ = next.judge(w.p, scangate.At(now))
		}
		var gc gateChange
		next, gc = putPR(t, r, true, next, scangate.CauseBaseline)
		err := s.commit(ctx, "re-classify findings", t)
		if isCancelled(err) {
			return false, nil // a finding, the scan or the PR moved: read again
		}
		if err != nil {
			return false, err
		}
		r, cver = next, cver+1
		decided = decided || gc.decided()
	}
	return decided, s.dropOtherAbsent(ctx, w.sc.ID, w.tg.scanID)
}

// updateChanges adds to t the updates of the findings whose state
// changes (each under its version), and returns newSev as they leave it.
func updateChanges(t *tx, part []reclassChange, newSev scangate.SevCounts) scangate.SevCounts {
	for _, ch := range part {
		cond := when(ref(aFindVer)+" = :fv", ":fv", num(ch.fv))
		if ch.fv == 0 {
			cond = when("attribute_not_exists(" + ref(aFindVer) + ")")
		}
		t.update(lFinding, ch.key, "SET "+ref(aBaselineState)+" = :bs, "+ref(aFindVer)+" = :next",
			item{":bs": str(ch.state), ":next": num(ch.fv + 1)}, cond)
		if !ch.sup {
			d := int64(1)
			if ch.state == scangate.BaselineUnchanged {
				d = -1
			}
			newSev.Add(ch.sev, d)
		}
	}
	return newSev
}

// reclassChange is a finding whose baseline state a re-classification
// changes.
type reclassChange struct {
	key   item
	fv    int64
	state string
	sev   scangate.Severity
	sup   bool
}

// countStates is the new and unchanged counts of a scan classified as
// was once the changes done are written.
func countStates(was scangate.Classification, done []reclassChange) (int64, int64) {
	n, u := was.New, was.Unchanged
	for _, c := range done {
		if c.state == scangate.BaselineNew {
			n, u = n+1, u-1
		} else {
			n, u = n-1, u+1
		}
	}
	return n, u
}

// setClass writes a scan's new findings per severity, its classification
// and its block status under its count version.
func setClass(t *tx, sc scangate.Scan, cver int64, block bool) {
	c := when(ref(aCountVer)+" = :cv", ":cv", num(cver))
	if cver == 0 {
		c = when("attribute_not_exists("+ref(aCountVer)+") OR "+ref(aCountVer)+" = :cv", ":cv", num(cver))
	}
	cl := sc.Class
	t.update(lCounts, scanKey(sc.ID),
		"SET "+ref(aNewSev)+" = :nsev, "+ref(aNewCount)+" = :n, "+ref(aUnchCount)+" = :u, "+ref(aAbsentCount)+" = :a, "+
			ref(aBaseline)+" = :bl, "+ref(aBaselineSHA)+" = :sha, "+ref(aBaselineMatch)+" = :m, "+ref(aBlockStatus)+" = :b, "+ref(aCountVer)+" = :next",
		item{":nsev": sevAttr(sc.NewSev), ":n": num(cl.New), ":u": num(cl.Unchanged), ":a": num(cl.Absent), ":bl": num(cl.BaselineScanID),
			":sha": str(cl.BaselineSHA), ":m": str(cl.Match), ":b": boolean(block), ":next": num(cver + 1)}, c)
}

// absentItem is the i-th ABSENT item of scan against baseline, from the
// baseline's finding it.
func absentItem(scan, baseline int64, i int, it item) item {
	a := key(scanPK(scan), absentSK(baseline, i))
	for _, name := range []string{aName, aRule, aPath, aLine, aSev, aFP, aFPSource, aType, aAliases} {
		if v, ok := it[name]; ok {
			a[name] = v
		}
	}
	a[aBaseline] = num(baseline)
	idx, _ := strconv.Atoi(getS(it, aSK)[len(findingPrefix):])
	a[aIndex] = num(int64(idx))
	return a
}

// lAbsent labels the ABSENT items a re-classification writes or retires.
const lAbsent = "absent"

// dropOtherAbsent retires a scan's ABSENT items of baselines other than
// baseline (those of a baseline it no longer has, or written by a
// re-classification that did not switch): no reader reads them (readers
// take the baseline from the PR record), and their ttl, set to now, has
// DynamoDB delete them. Updates, in transactions of 100: the work
// functions may update items, not delete them.
func (s *Store) dropOtherAbsent(ctx context.Context, scan, baseline int64) error {
	keep := absentPrefix(baseline)
	now := num(time.Now().Unix())
	return s.queryPages(ctx, "list absent findings", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :a)"),
		ExpressionAttributeValues: item{":pk": str(scanPK(scan)), ":a": str("ABSENT#")},
		ProjectionExpression:      aws.String(ref(aPK) + ", " + ref(aSK) + ", " + ref(aTTL)),
		ConsistentRead:            aws.Bool(true),
	}, func(page []item) error {
		t := s.newTx()
		for _, it := range page {
			if strings.HasPrefix(getS(it, aSK), keep) || it[aTTL] != nil {
				continue
			}
			t.update(lAbsent, keyOf(it), "SET "+ref(aTTL)+" = :now", item{":now": now}, nil)
			if t.len() == txMaxItems {
				if err := s.commitIdempotent(ctx, "retire absent findings", t); err != nil {
					return err
				}
				t = s.newTx()
			}
		}
		if t.len() == 0 {
			return nil
		}
		return s.commitIdempotent(ctx, "retire absent findings", t)
	})
}

// DefaultBaselineBudget is how long a branch recording runs the
// re-classification it leaves before answering; what is left the
// scheduled function resumes once the lease runs out (and fans out, when
// planned so).
const DefaultBaselineBudget = 10 * time.Second

// runBaseline runs the baseline work a branch recording wrote, for up to
// the store's baseline budget (and never past ctx's deadline less 5 s).
// The recording is made whatever happens to the work: the work is
// durable, and its failure is left to the scheduled function. With no
// budget it only gives the work's lease up, for the scheduled function.
func (s *Store) runBaseline(ctx context.Context, items []work.Item) {
	if len(items) == 0 {
		return
	}
	if s.baselineBudget <= 0 {
		for _, it := range items {
			_, _ = s.RenewWork(ctx, it.ID, it.Lease, 0) // else it waits for its lease to run out
		}
		return
	}
	end := time.Now().Add(s.baselineBudget)
	if d, ok := ctx.Deadline(); ok && d.Add(-5*time.Second).Before(end) {
		end = d.Add(-5 * time.Second)
	}
	budget, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	run := s.baselineRunner(time.Now)
	for _, it := range items {
		_, _ = run.Continue(budget, it) // left running: resumed by the scheduled function
	}
}

// rebase is the handshake of a pull request's recording with concurrent
// base scans: once its scans are committed, it reads the base branch
// again, and when the analysis that any of them was classified against
// (not exact) is no longer what the branch says, re-classifies the PR: a
// base scan that committed after this recording read its baseline either
// finds these scans committed (its work re-classifies them) or is found
// here.
func (r *recording) rebase(ctx context.Context) error {
	first := r.scans[0]
	if first.IsBranch() || r.baseRef == "" {
		return nil
	}
	b, _, err := r.s.branchRecordOf(ctx, first.VcID, first.RepoID, r.baseRef)
	if err != nil {
		return err
	}
	var stale []catKey
	for i, ns := range r.scans {
		if r.recordedBefore(i) || !r.committed[i/scansPerCommit] || !completed(ns.Status) {
			continue
		}
		k := catKeyOf(scangate.Scan{Type: ns.Type, Category: ns.Category})
		var used int64
		if bl := r.base[i]; bl != nil {
			if bl.match == scangate.MatchExact {
				continue
			}
			used = bl.scanID
		}
		if c, ok := b.bases[k]; ok && (c.scanID != used || r.baseSHA != "" && c.sha == r.baseSHA) {
			stale = append(stale, k)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	_, err = r.s.reclassify(ctx, prKey(first.VcID, first.RepoID, first.PR.Number), stale, "", time.Time{}, r.now)
	return err
}
