package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A pull request's scan is classified in its own recording against its
// baseline: the base branch's completed analysis of the same (type,
// category) at the PR's base_sha (exact: a COMMIT marker names it), else
// the branch's newest completed one (newest), else none (every finding
// new). A branch analysis that did not complete is never a baseline, and
// a PR scan that did not complete has none. Each finding item
// gets bs (new or unchanged: whether its identity, (rule id,
// fingerprint) within the scan's type and category, is among the
// baseline's), and the baseline's findings whose identity the scan does
// not have are written as ABSENT items of the scan, with what a listing
// shows of them:
//
//	BRANCH#<vc>#<repo> / COMMIT#<branch id>#<TYPE>#<category>#<sha>   scan, at: a branch analysis of that commit
//	SCAN#<id> / ABSENT#<baseline>#<nnnnnn>                            bl, idx1, type, name, aliases, rule, path, line, sev, fp, fps
//
// The scan item keeps its classification: bl, blsha, blm (its baseline,
// absent when none), cls (classified), nnew, nunch, nabs.

// Attributes of classification.
const (
	aBaselineState = "bs"
	aBaseline      = "bl"
	aBaselineSHA   = "blsha"
	aBaselineMatch = "blm"
	aClassified    = "cls"
	aNewCount      = "nnew"
	aUnchCount     = "nunch"
	aAbsentCount   = "nabs"
	aIndex         = "idx1"
)

func commitSK(branchID int64, k catKey, sha string) string {
	return "COMMIT#" + strconv.FormatInt(branchID, 10) + "#" + k.attr() + "#" + sha
}

func commitKey(vcID, repoID, branchID int64, k catKey, sha string) item {
	return key(branchesPK(vcID, repoID), commitSK(branchID, k, sha))
}

func absentSK(baseline int64, i int) string { return absentPrefix(baseline) + fmt.Sprintf("%06d", i) }

// identity is a finding's identity within its scan's type and category:
// its rule id and fingerprint.
type identity [16]byte

func identityOf(rule, fp string) identity {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(rule)) + ":" + rule + fp))
	return identity(sum[:16])
}

// baseline is a recording scan's baseline: the analysis, and the
// identities of its findings, each marked once the scan has it.
type baseline struct {
	scanID int64
	sha    string
	match  string
	ids    map[identity]bool
}

// classes counts a scan's findings by baseline state.
type classes struct {
	newN, unch, absent int64
}

// completed reports whether a scan of this status completed: only such
// a branch analysis is a baseline, and only such a PR scan is classified
// against one.
func completed(status string) bool { return status == scangate.StatusCompleted }

// baselineOf is what a completed PR scan of k is classified against,
// given its base branch's record b and the analysis exactID (0 when
// none) that the COMMIT marker of the PR's base_sha names: that one
// (exact), else the branch's newest completed scan of k (newest), else
// none. The recording, the re-classification and check all choose by it.
func baselineOf(b branchRecord, k catKey, exactID int64, baseSHA string) target {
	if exactID != 0 {
		return target{scanID: exactID, sha: baseSHA, match: scangate.MatchExact}
	}
	if bc, ok := b.bases[k]; ok {
		return target{scanID: bc.scanID, sha: bc.sha, match: scangate.MatchNewest}
	}
	return target{}
}

// readBaselines finds each scan's baseline (to record here) from the
// branch of base (its record, and the COMMIT markers at sha when sha is
// set) and reads the identities of its findings. Scans of a PR without a
// base, and scans that did not complete, have none.
func (r *recording) readBaselines(ctx context.Context, baseRef, sha string) error {
	r.base = make([]*baseline, len(r.scans))
	if baseRef == "" {
		return nil
	}
	first := r.scans[0]
	b, found, err := r.s.branchRecordOf(ctx, first.VcID, first.RepoID, baseRef)
	if err != nil || !found {
		return err
	}
	exact := map[catKey]item{}
	if sha != "" {
		var keys []item
		for _, ns := range r.scans {
			keys = append(keys, commitKey(first.VcID, first.RepoID, b.id, catKeyOf(scangate.Scan{Type: ns.Type, Category: ns.Category}), sha))
		}
		items, err := r.s.batchGetAll(ctx, "get base commits", keys)
		if err != nil {
			return err
		}
		for _, it := range items {
			exact[catKeyOfAttr(getS(it, aCategory))] = it
		}
	}
	for i, ns := range r.scans {
		if r.recordedBefore(i) || !completed(ns.Status) {
			continue
		}
		k := catKeyOf(scangate.Scan{Type: ns.Type, Category: ns.Category})
		var exactID int64
		if it, ok := exact[k]; ok {
			exactID = getN(it, aScanID)
		}
		tg := baselineOf(b, k, exactID, sha)
		if tg.scanID == 0 {
			continue
		}
		bl := &baseline{scanID: tg.scanID, sha: tg.sha, match: tg.match, ids: map[identity]bool{}}
		err := r.s.queryPages(ctx, "read baseline", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
			ExpressionAttributeValues: item{":pk": str(scanPK(bl.scanID)), ":f": str(findingPrefix)},
			ProjectionExpression:      aws.String(ref(aRule) + ", " + ref(aFP)),
			ConsistentRead:            aws.Bool(true),
		}, func(page []item) error {
			for _, it := range page {
				if fp := getS(it, aFP); fp != "" {
					bl.ids[identityOf(getS(it, aRule), fp)] = false
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		r.base[i] = bl
	}
	return nil
}

// catKeyOfAttr reads a catKey written as <TYPE>#<category>.
func catKeyOfAttr(s string) catKey {
	for i := range len(s) {
		if s[i] == '#' {
			return catKey{scangate.ScanType(s[:i]), s[i+1:]}
		}
	}
	return catKey{}
}

// classify gives a part's findings of scan i their baseline state (all
// new without a baseline) and counts them; the caller holds r.mu.
func (r *recording) classify(i int, fs []scangate.Finding) []string {
	states := make([]string, len(fs))
	bl := r.base[i]
	c := &r.class[i]
	for k, f := range fs {
		states[k] = scangate.BaselineNew
		if bl != nil && f.Fingerprint != "" {
			id := identityOf(f.Rule, f.Fingerprint)
			if _, ok := bl.ids[id]; ok {
				bl.ids[id] = true
				states[k] = scangate.BaselineUnchanged
			}
		}
		if states[k] == scangate.BaselineNew {
			c.newN++
		} else {
			c.unch++
		}
	}
	return states
}

// writeAbsent writes, for each scan with a baseline, the baseline's
// findings whose identity the scan does not have as its ABSENT items
// (reading the baseline again, a page at a time), and counts them.
func (r *recording) writeAbsent(ctx context.Context) error {
	b := &batcher{w: r.w}
	for i, bl := range r.base {
		if bl == nil || r.recordedBefore(i) {
			continue
		}
		n := 0
		err := r.s.queryPages(ctx, "read baseline", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
			ExpressionAttributeValues: item{":pk": str(scanPK(bl.scanID)), ":f": str(findingPrefix)},
			ConsistentRead:            aws.Bool(true),
		}, func(page []item) error {
			for _, it := range page {
				if fp := getS(it, aFP); fp != "" && bl.ids[identityOf(getS(it, aRule), fp)] {
					continue
				}
				a := absentItem(r.ids[i], bl.scanID, n, it)
				n++
				if err := b.put(types.WriteRequest{PutRequest: &types.PutRequest{Item: a}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.class[i].absent = int64(n)
		r.mu.Unlock()
	}
	return b.flush()
}

// AbsentPage reads a page of a pull request's absent findings: those of
// the baselines of its newest scans (by scan type, then category) that
// the scans do not have, in each baseline's order. Its record, then one
// strongly consistent Query a scan the page reaches. A cursor names the
// scan it stops in; a cursor of a scan that is no longer the newest of
// its pair is not of this listing (422). It returns the PR it read (a
// token scoped to repositories is checked against it), with the error too
// once the record is read.
func (s *Store) AbsentPage(ctx context.Context, prID int64, limit int, after map[string]string) (scangate.Page[scangate.AbsentFinding], scangate.PR, error) {
	r, err := s.prByID(ctx, prID)
	if err != nil {
		return scangate.Page[scangate.AbsentFinding]{}, scangate.PR{}, err
	}
	pr := r.asPR()
	cats := r.categories()
	start := 0
	if after != nil {
		start = -1
		for i, c := range cats {
			if after[aPK] == scanPK(c.ScanID) {
				start = i
			}
		}
		if start < 0 {
			return scangate.Page[scangate.AbsentFinding]{}, pr, errBadCursor()
		}
	}
	out := scangate.Page[scangate.AbsentFinding]{Items: []scangate.AbsentFinding{}}
	for i := start; i < len(cats) && len(out.Items) < limit; i++ {
		q := pageQuery{pk: aPK, sk: aSK, value: scanPK(cats[i].ScanID), prefix: absentPrefix(cats[i].Class.BaselineScanID), strong: true}
		from := after // a cursor of the start of a scan has no sort key
		if i != start || after[aSK] == "" {
			from = nil
		}
		p, err := s.queryPage(ctx, "list absent findings", q, limit-len(out.Items), from)
		if err != nil {
			return scangate.Page[scangate.AbsentFinding]{}, pr, err
		}
		c := cats[i]
		pg := pageOf(q, p, func(it item) scangate.AbsentFinding { return absentFrom(c.Type, c.Category, c.ScanID, it) })
		out.Items, out.After = append(out.Items, pg.Items...), append(out.After, pg.After...)
		out.Next = pg.Next
		if pg.Next == nil && len(out.Items) == limit && i+1 < len(cats) {
			// full, and the next scan starts the next page
			out.Next = map[string]string{aPK: scanPK(cats[i+1].ScanID)}
		}
	}
	return out, pr, nil
}

// absentFrom reads an ABSENT item of the scan scanID of type t and
// category.
func absentFrom(t scangate.ScanType, category string, scanID int64, it item) scangate.AbsentFinding {
	return scangate.AbsentFinding{ScanType: t, Category: category, ScanID: scanID, BaselineScanID: getN(it, aBaseline),
		Index: int(getN(it, aIndex)), Name: getS(it, aName), Aliases: getStrings(it, aAliases), Rule: getS(it, aRule),
		Path: getS(it, aPath), Line: getNp(it, aLine), Severity: severityOf(scangate.Severity(getS(it, aSev))),
		Fingerprint: getS(it, aFP), FingerprintSource: getS(it, aFPSource)}
}
