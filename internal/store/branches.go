package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// A branch record is keyed by its identity (integration, repository,
// name), so it is its own uniqueness marker, and a repository's branches
// share one partition, in the order of their names (the listing reads it
// with a Query, no index). A BRANCHID item maps its id to that identity.
// It keeps the branch's newest scan of each (scan type, category) with
// its commit (cats), and its newest completed one (the pair's baseline);
// the counts are read from those scans, which re-evaluations keep exact,
// so a re-evaluation never writes a branch.
//
//	BRANCH#<vc>#<repo> / NAME#<name>   id, vc_id, repo_id, name, last_scan, last_scan_id, cats, ver
//	BRANCHID#<id> / BRANCHID           vc_id, repo_id, name
//
// cats maps <TYPE>#<category> to {id, at, sha} of the newest scan and,
// when that one did not complete, nc (true) and {bid, bat, bsha} of the
// newest completed one (none when the pair has none); an entry without
// nc (each one written before nc existed, too) is its own baseline.

// Attributes of branch records and of branch analyses.
const (
	aBranchID = "branch_id"
	aBranch   = "branch"
)

// Labels of a branch recording's commit.
const (
	lBranch   = "branch"
	lBranchID = "branch id"
	lCommit   = "branch commit"
)

func branchesPK(vcID, repoID int64) string { return KeyBranch + fmt.Sprintf("%d#%d", vcID, repoID) }

const branchSKPrefix = "NAME#"

func branchKey(vcID, repoID int64, name string) item {
	return key(branchesPK(vcID, repoID), branchSKPrefix+name)
}

func branchIDKey(id int64) item { return key(KeyBranchID+strconv.FormatInt(id, 10), "BRANCHID") }

// branchScansPK is the GSI3 partition of a branch's scans (apart from
// every pull request's).
func branchScansPK(branchID int64) string { return "BRANCHSCANS#" + strconv.FormatInt(branchID, 10) }

// branchCat is a branch's newest scan of one pair.
type branchCat struct {
	scanID int64
	at     scangate.Time
	sha    string
}

// branchRecord is a branch record as stored.
type branchRecord struct {
	id, vcID, repoID int64
	name             string
	lastScan         scangate.Time
	lastScanID       int64
	cats             map[catKey]branchCat
	bases            map[catKey]branchCat // the newest completed scan of each pair: its baseline
	ver              int64
}

func (b branchRecord) item() item {
	it := branchKey(b.vcID, b.repoID, b.name)
	it[aID], it[aVcID], it[aRepoID], it[aName] = num(b.id), num(b.vcID), num(b.repoID), str(b.name)
	it[aLastScan], it[aLastScanID] = str(b.lastScan.String()), num(b.lastScanID)
	cats := item{}
	for k, c := range b.cats {
		e := item{aID: num(c.scanID), "at": str(c.at.String())}
		if c.sha != "" {
			e["sha"] = str(c.sha)
		}
		if bc, ok := b.bases[k]; !ok || bc.scanID != c.scanID {
			e["nc"] = boolean(true)
			if ok {
				e["bid"], e["bat"] = num(bc.scanID), str(bc.at.String())
				if bc.sha != "" {
					e["bsha"] = str(bc.sha)
				}
			}
		}
		cats[k.attr()] = &types.AttributeValueMemberM{Value: e}
	}
	it[aCats] = &types.AttributeValueMemberM{Value: cats}
	it[aVer] = num(b.ver)
	return it
}

func branchFrom(it item) branchRecord {
	b := branchRecord{id: getN(it, aID), vcID: getN(it, aVcID), repoID: getN(it, aRepoID), name: getS(it, aName),
		lastScan: getTime(it, aLastScan), lastScanID: getN(it, aLastScanID), cats: map[catKey]branchCat{}, bases: map[catKey]branchCat{},
		ver: getN(it, aVer)}
	if m, ok := it[aCats].(*types.AttributeValueMemberM); ok {
		for k, v := range m.Value {
			e, _ := v.(*types.AttributeValueMemberM)
			if e == nil {
				continue
			}
			typ, cat, _ := strings.Cut(k, "#")
			ck := catKey{scangate.ScanType(typ), cat}
			b.cats[ck] = branchCat{scanID: getN(e.Value, aID), at: getTime(e.Value, "at"), sha: getS(e.Value, "sha")}
			switch {
			case !getBool(e.Value, "nc", false):
				b.bases[ck] = b.cats[ck]
			case getN(e.Value, "bid") != 0:
				b.bases[ck] = branchCat{scanID: getN(e.Value, "bid"), at: getTime(e.Value, "bat"), sha: getS(e.Value, "bsha")}
			}
		}
	}
	return b
}

// with returns the record once sc is recorded: the newest scan overall
// sets last_scan, the newest of its (type, category) stands for that
// pair, and the newest completed one is the pair's baseline.
func (b branchRecord) with(sc scangate.Scan) branchRecord {
	at := sc.CreatedAt.String()
	if newer(at, sc.ID, b.lastScan.String(), b.lastScanID) {
		b.lastScan, b.lastScanID = sc.CreatedAt, sc.ID
	}
	k := catKeyOf(sc)
	b.cats = withNewer(b.cats, k, sc)
	if completed(sc.Status) {
		b.bases = withNewer(b.bases, k, sc)
	}
	return b
}

// withNewer is m with sc as k's entry when sc is newer than it (a copy:
// m may be shared with the record as read).
func withNewer(m map[catKey]branchCat, k catKey, sc scangate.Scan) map[catKey]branchCat {
	if old, ok := m[k]; ok && !newer(sc.CreatedAt.String(), sc.ID, old.at.String(), old.scanID) {
		return m
	}
	out := make(map[catKey]branchCat, len(m)+1)
	for kk, v := range m {
		out[kk] = v
	}
	out[k] = branchCat{scanID: sc.ID, at: sc.CreatedAt, sha: sc.CommitSHA}
	return out
}

// branchRecordOf reads a branch record by its identity (consistent).
func (s *Store) branchRecordOf(ctx context.Context, vcID, repoID int64, name string) (branchRecord, bool, error) {
	it, err := s.getItem(ctx, "get branch", branchKey(vcID, repoID, name))
	if err != nil || it == nil {
		return branchRecord{}, false, err
	}
	return branchFrom(it), true, nil
}

// commitBranchScans puts branch analyses of one branch, with their audit
// entries and scan.recorded events, and creates or updates the branch
// record, in one transaction; no pull request is read or written. When
// it changes the branch's baseline of a category (its newest completed
// scan), the transaction also writes the work that re-classifies the
// pull requests based on the branch (KindBaseline), which it returns
// (held until lease). The
// first scan of a branch allocates its id and puts the record under
// attribute_not_exists (the record is the uniqueness marker of (vc_id,
// repo_id, name)); a racing first scan loses that condition, reads the
// record and updates it under its version instead.
func (s *Store) commitBranchScans(ctx context.Context, scans []scangate.Scan, once string, who scangate.Who, lease int64) (*work.Item, error) {
	var newID, workID int64
	var w *work.Item
	first := scans[0]
	err := s.retry.Do(ctx, "record branch scan", func(int) (bool, error) {
		old, found, err := s.branchRecordOf(ctx, first.VcID, first.RepoID, first.Branch)
		if err != nil {
			return true, err
		}
		if !found {
			if newID == 0 {
				if newID, err = s.nextID(ctx, "branch"); err != nil {
					return true, err
				}
			}
			old = branchRecord{id: newID, vcID: first.VcID, repoID: first.RepoID, name: first.Branch, cats: map[catKey]branchCat{},
				bases: map[catKey]branchCat{}}
		}
		t, moved, err := s.branchRecordingTx(old, found, scans, once, who)
		if err != nil {
			return true, err
		}
		w = nil
		if len(moved) > 0 {
			if workID == 0 {
				if workID, err = s.nextID(ctx, "work"); err != nil {
					return true, err
				}
			}
			it, err := putWork(t, workID, KindBaseline, baselineParams{VcID: old.vcID, RepoID: old.repoID, Name: old.name, Cats: moved},
				first.CreatedAt.Time, lease)
			if err != nil {
				return true, err
			}
			w = &it
		}
		err = s.commit(ctx, "record branch scan", t)
		switch {
		case err == nil, failed(err, lOnce):
			return true, err
		case lostRace(err, lBranch):
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// branchRecordingTx is the transaction of a branch recording's commit,
// and the categories (as <TYPE>#<category>) whose baseline (newest
// completed scan) it moves. Only a completed analysis writes its COMMIT
// marker (a PR's exact baseline).
func (s *Store) branchRecordingTx(old branchRecord, found bool, scans []scangate.Scan, once string, who scangate.Who) (*tx, []string, error) {
	first := scans[0]
	next := old
	t := s.newTx()
	var ids []int64
	for i := range scans {
		scans[i].BranchID, scans[i].PRID, scans[i].PRNumber = old.id, 0, 0
		next = next.with(scans[i])
		t.put(lScan, scanItem(scans[i]), when("attribute_not_exists("+ref(aPK)+")"))
		s.addAudit(t, scangate.NewAudit(scangate.AuditScanRecord, who, scanTarget(scans[i].ID), scanChanges(scans[i]), first.CreatedAt.Time))
		s.addEvent(t, scangate.NewEvent(scangate.EventScanRecorded, scans[i].CreatedAt.Time, scangate.ViewScan(scans[i], scangate.PR{})))
		if sha := scans[i].CommitSHA; sha != "" && completed(scans[i].Status) { // the analysis of this commit: a PR's exact baseline
			k := catKeyOf(scans[i])
			t.put(lCommit, merge(commitKey(old.vcID, old.repoID, old.id, k, sha), item{aScanID: num(scans[i].ID), aCategory: str(k.attr())}), nil)
		}
		ids = append(ids, scans[i].ID)
	}
	if len(next.cats) > scangate.MaxCategories {
		return nil, nil, scangate.Errorf(scangate.KindConflict, "branch %q would have %d (scan type, category) pairs; it may have at most %d",
			old.name, len(next.cats), scangate.MaxCategories)
	}
	var moved []string // re-classifying PRs: the pairs whose baseline moves
	for k, c := range next.bases {
		if o, ok := old.bases[k]; !ok || o.scanID != c.scanID {
			moved = append(moved, k.attr())
		}
	}
	slices.Sort(moved)
	c := when("attribute_not_exists(" + ref(aPK) + ")")
	if found {
		c = when(ref(aVer)+" = :ver", ":ver", num(old.ver))
	}
	next.ver = old.ver + 1
	t.put(lBranch, next.item(), c)
	if !found {
		id := branchIDKey(next.id)
		id[aVcID], id[aRepoID], id[aName] = num(next.vcID), num(next.repoID), str(next.name)
		t.put(lBranchID, id, nil)
	}
	if once != "" {
		it := merge(onceKey(once), item{aScanID: numList(ids), aTTL: num(first.CreatedAt.Add(onceTTL).Unix())})
		t.put(lOnce, it, when("attribute_not_exists("+ref(aPK)+")"))
	}
	return t, moved, nil
}

// Branch reads a branch by its id with its newest scans: its id item,
// its record, then its newest scans (their counts), three round trips.
func (s *Store) Branch(ctx context.Context, id int64) (scangate.Branch, error) {
	it, err := s.getItem(ctx, "get branch id", branchIDKey(id))
	if err != nil {
		return scangate.Branch{}, err
	}
	if it != nil {
		b, found, err := s.branchRecordOf(ctx, getN(it, aVcID), getN(it, aRepoID), getS(it, aName))
		if err != nil {
			return scangate.Branch{}, err
		}
		if found {
			out, err := s.branchesWithScans(ctx, []branchRecord{b})
			if err != nil {
				return scangate.Branch{}, err
			}
			return out[0], nil
		}
	}
	return scangate.Branch{}, scangate.Errorf(scangate.KindNotFound, "no branch has the id %d", id)
}

// branchesWithScans reads the newest scans of branch records (one
// BatchGetItem of up to 100 keys, parallel) and makes the branches.
func (s *Store) branchesWithScans(ctx context.Context, recs []branchRecord) ([]scangate.Branch, error) {
	var keys []item
	for _, b := range recs {
		for _, c := range b.cats {
			keys = append(keys, scanKey(c.scanID))
		}
	}
	scans := map[int64]scangate.Scan{}
	if len(keys) > 0 {
		items, err := s.batchGetAll(ctx, "get scans", keys)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			sc := scanFrom(it)
			scans[sc.ID] = sc
		}
	}
	out := make([]scangate.Branch, len(recs))
	for i, b := range recs {
		out[i] = scangate.Branch{ID: b.id, VcID: b.vcID, RepoID: b.repoID, Name: b.name, LastScan: b.lastScan}
		for k, c := range b.cats {
			sc, ok := scans[c.scanID]
			if !ok {
				return nil, fmt.Errorf("branch %d: its newest scan %d is missing", b.id, c.scanID)
			}
			out[i].Categories = append(out[i].Categories, scangate.BranchCategory{Type: k.typ, Category: k.category, ScanID: c.scanID,
				CommitSHA: c.sha, CreatedAt: c.at, SecretCount: sc.SecretCount, VulnerabilityCount: sc.VulnerabilityCount})
		}
		scangate.SortBranchCategories(out[i].Categories)
	}
	return out, nil
}

// BranchesPage reads a page of one repository's branches by name (one
// Query of its partition, then their newest scans), or the one of a name
// (one GetItem).
func (s *Store) BranchesPage(ctx context.Context, f scangate.BranchFilter, limit int, after map[string]string) (scangate.Page[scangate.Branch], error) {
	if f.Name != "" {
		b, found, err := s.branchRecordOf(ctx, f.VcID, f.RepoID, f.Name)
		if err != nil || !found {
			return scangate.Page[scangate.Branch]{Items: []scangate.Branch{}}, err
		}
		out, err := s.branchesWithScans(ctx, []branchRecord{b})
		if err != nil {
			return scangate.Page[scangate.Branch]{}, err
		}
		return scangate.Page[scangate.Branch]{Items: out, After: []map[string]string{nil}}, nil
	}
	q := pageQuery{pk: aPK, sk: aSK, value: branchesPK(f.VcID, f.RepoID), prefix: branchSKPrefix, strong: true}
	p, err := s.queryPage(ctx, "list branches", q, limit, after)
	if err != nil {
		return scangate.Page[scangate.Branch]{}, err
	}
	recs := make([]branchRecord, len(p.Items))
	for i, it := range p.Items {
		recs[i] = branchFrom(it)
	}
	bs, err := s.branchesWithScans(ctx, recs)
	if err != nil {
		return scangate.Page[scangate.Branch]{}, err
	}
	out := pageOf(q, p, func(item) scangate.Branch { return scangate.Branch{} })
	copy(out.Items, bs)
	return out, nil
}
