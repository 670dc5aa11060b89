package store

import (
	"context"
	"slices"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// A PR's gate is stored on its record (prs.go) and written by every
// writer of the record through putPR: recordings (scans.go),
// re-evaluations (settle.go) and re-judgements after a policy change
// (rejudge, below).

// lBlock labels a scan's block status written by a re-judgement.
const lBlock = "block"

// eventReserve is the room every transaction that writes a PR record
// keeps for one more item: the event of a changed decision
// (pr.gate_changed), which putPR adds.
const eventReserve = 1

// gateChange is what a write of a PR record does to its gate: the
// decision before and after, and the decision's sequence after (it moves
// only when the decision does).
type gateChange struct {
	prID       int64
	prev, next scangate.Gate
	seq        int64
}

// decided reports whether the decision changed: blocked, or its reasons.
func (c gateChange) decided() bool {
	return c.prev.Blocked != c.next.Blocked || !scangate.SameReasons(c.prev.Reasons, c.next.Reasons)
}

// putPR adds to t the write of a PR record: next over old as read,
// conditioned on old's version, or on the record's absence for a new PR.
// Every writer of a PR record goes through it, so every gate change puts
// its pr.gate_changed event, of cause, in the same transaction, in the
// room eventReserve keeps. A gate change moves the PR's sequence (gseq):
// judge moves it when the decision changes (blocked or the reasons, or
// the PR's first gate), and putPR when the head commit does, since a new
// commit needs its own commit status even when the decision stays. It
// returns the record as written.
func putPR(t *tx, old prRecord, found bool, next prRecord, cause string) (prRecord, gateChange) {
	c := when("attribute_not_exists(" + ref(aPK) + ")")
	if found {
		c = when(ref(aVer)+" = :ver", ":ver", num(old.ver))
	}
	if next.gseq == old.gseq && next.headSHA != old.headSHA {
		next.gseq++
	}
	next.ver, next.headMoved = old.ver+1, false
	t.put(lPR, next.item(), c)
	prev := old.gate
	if !found {
		prev = scangate.Gate{Reasons: []scangate.GateReason{}}
	}
	t.gates, t.causes = append(t.gates, next.gate), append(t.causes, cause)
	if next.gseq != old.gseq {
		putEvent(t, scangate.NewEvent(scangate.EventGateChanged, next.gate.EvaluatedAt.Time, gateEvent(old, found, next, cause)))
	}
	return next, gateChange{prID: next.ID, prev: prev, next: next.gate, seq: next.gseq}
}

// gateEvent is the data of next's pr.gate_changed: its gate as GET
// /pr/{pr_id}/gate shows it, the PR's identity, the change's sequence and
// cause, and old's decision (none for a new PR).
func gateEvent(old prRecord, found bool, next prRecord, cause string) scangate.GateChange {
	e := scangate.GateChange{GateView: scangate.ViewGate(next.prGate()), VcID: next.VcID, RepoID: next.RepoID,
		RepoName: next.repoName, Number: next.Number, Sequence: next.gseq, Cause: cause}
	if found {
		e.Previous = &scangate.GateDecision{Blocked: old.gate.Blocked, Reasons: scangate.NonNil(old.gate.Reasons)}
	}
	return e
}

// prRecords reads PR records by key (strongly consistent), those of before
// categories made exact.
func (s *Store) prRecords(ctx context.Context, keys []item) (map[string]prRecord, error) {
	items, err := s.batchGetAll(ctx, "get PRs", keys)
	if err != nil {
		return nil, err
	}
	recs := make(map[string]prRecord, len(items))
	for _, it := range items {
		recs[getS(it, aPK)] = prFrom(it)
	}
	return recs, s.exactCats(ctx, recs)
}

// reposOf lists the repositories of PR records.
func reposOf(recs map[string]prRecord) []int64 {
	var repos []int64
	for _, r := range recs {
		if !slices.Contains(repos, r.RepoID) {
			repos = append(repos, r.RepoID)
		}
	}
	slices.Sort(repos)
	return repos
}

// rejudge makes the gates of the PRs at keys, and the block status of
// their newest scans, what the current policy decides from their stored
// counts (which it never changes). After its writes it reads the policy
// version again and starts over while it moved (the handshake). It
// returns what it did: how many PRs it judged (prs), how many of their
// gates it wrote (written: a new decision or a new policy) and how many
// decisions changed (changed: blocked, or the reasons).
func (s *Store) rejudge(ctx context.Context, keys []item, now time.Time) (map[string]int64, error) {
	written, changed := map[string]bool{}, map[string]bool{}
	out := map[string]int64{"prs": 0, "written": 0, "changed": 0}
	if len(keys) == 0 {
		return out, nil
	}
	for {
		recs, err := s.prRecords(ctx, keys)
		if err != nil {
			return nil, err
		}
		pol, err := s.readPolicies(ctx, reposOf(recs))
		if err != nil {
			return nil, err
		}
		pks := make([]string, 0, len(recs))
		for pk := range recs {
			pks = append(pks, pk)
		}
		slices.Sort(pks)
		for _, pk := range pks {
			c, err := s.rejudgeOne(ctx, recs[pk], pol, now)
			if err != nil {
				return nil, err
			}
			if c != nil {
				written[pk], changed[pk] = true, changed[pk] || c.decided()
			}
		}
		pv, err := s.policyVersion(ctx)
		if err != nil {
			return nil, err
		}
		if pv == pol.pv {
			out["prs"] = int64(len(recs))
			for pk := range written {
				out["written"]++
				if changed[pk] {
					out["changed"]++
				}
			}
			return out, nil
		}
	}
}

// rejudgeOne writes one PR's gate and its newest scans' block status
// when the policy of pol decides them otherwise than stored; a record or
// scan that moved meanwhile is read again. It returns what it did to the
// gate, nil when it wrote nothing.
func (s *Store) rejudgeOne(ctx context.Context, r prRecord, pol policies, now time.Time) (*gateChange, error) {
	var done *gateChange
	err := s.retry.Do(ctx, "re-judge PR", func(int) (bool, error) {
		p := pol.effective(r.RepoID)
		next, changed := r.judge(p, scangate.At(now))
		t := s.newTx()
		for k, c := range next.cats {
			b := p.ScanBlocks(c.Type, c.Status, c.Sev)
			if b == c.block {
				continue
			}
			setBlock(t, c, b)
			next = next.withSev(k, c.Sev, b, c.cver+1)
			changed = true
		}
		if !changed {
			return true, nil
		}
		_, c := putPR(t, r, true, next, scangate.CausePolicy)
		err := s.commit(ctx, "re-judge PR", t)
		if lostRace(err, lPR, lBlock) {
			recs, rerr := s.prRecords(ctx, []item{prKey(r.VcID, r.RepoID, r.Number)})
			if rerr != nil {
				return true, rerr
			}
			r = recs[getS(prKey(r.VcID, r.RepoID, r.Number), aPK)]
			return false, nil
		}
		if err == nil {
			done = &c
		}
		return true, err
	})
	return done, err
}

// setBlock writes a newest scan's block status under its count version.
func setBlock(t *tx, c catScan, b bool) {
	cond := when(ref(aCountVer)+" = :cv", ":cv", num(c.cver))
	if c.cver == 0 {
		cond = when("attribute_not_exists("+ref(aCountVer)+") OR "+ref(aCountVer)+" = :cv", ":cv", num(0))
	}
	t.update(lBlock, scanKey(c.ScanID), "SET "+ref(aBlockStatus)+" = :b, "+ref(aCountVer)+" = :next",
		item{":b": boolean(b), ":next": num(c.cver + 1)}, cond)
}
