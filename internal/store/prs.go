package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A PR record is keyed by its identity (integration, repository, number),
// so it is its own uniqueness marker; a PRID item maps its internal id to
// that identity. It keeps, besides the PR object of the API, its newest
// scan of each (scan type, category) with what judging them needs (cats),
// its stored gate, and whether it is blocked (the gate's decision), for
// the listing of PRs by last scan (GSI2 for all PRs, GSI3 per repository).
//
//	PR#<vc>#<repo>#<number> / PR    GSI2: PRS / <last_scan>#<id>; GSI3: PRS#<vc>#<repo> / same
//	                                repo_name: its newest scan's (the events name the repository by it)
//	PRID#<id> / PRID                vc_id, repo_id, pr_number
//
// cats maps <TYPE>#<category> to {id, at, st (status), sev (unsuppressed
// findings per severity), cv (the scan's count version)}. Every write of a
// scan's counts that is the newest of its pair writes its cats entry in
// the same transaction, so cv names the counts the PR knows. Records
// written before categories have no cats: their newest scan of each type
// (sec_*, vuln_*) reads as category default (legacyCats).

func prKey(vcID, repoID, number int64) item {
	return key(fmt.Sprintf("PR#%d#%d#%d", vcID, repoID, number), "PR")
}

func prIDKey(id int64) item { return key("PRID#"+strconv.FormatInt(id, 10), "PRID") }

// catKey names one (scan type, category) of a PR.
type catKey struct {
	typ      scangate.ScanType
	category string
}

func (k catKey) attr() string { return string(k.typ) + "#" + k.category }

func catKeyOf(sc scangate.Scan) catKey { return catKey{sc.Type, categoryOf(sc)} }

// categoryOf is a scan's category: DefaultCategory for scans recorded
// before categories.
func categoryOf(sc scangate.Scan) string {
	if sc.Category == "" {
		return scangate.DefaultCategory
	}
	return sc.Category
}

// catScan is a PR's newest scan of one pair: its count version, and its
// block status as stored on the scan (which a policy change re-judges).
type catScan struct {
	scangate.CategoryScan
	cver  int64
	block bool
}

// prRecord is a PR record with what deciding its gate needs.
type prRecord struct {
	scangate.PR
	lastScanID int64 // newest scan overall
	cats       map[catKey]catScan
	gate       scangate.Gate // the stored decision
	judged     bool          // the record has a stored gate
	gseq       int64         // changes of the decision so far
	headSHA    string        // the commit of its newest scan that named one
	headAt     string        // that scan's place in the order (at#id)
	repoName   string        // the repository's name, as its newest scan gives it
	headMoved  bool          // with gave it a new head commit, whose gate judge evaluates anew
	baseAt     string        // the place of the scan that named its base (PR.BaseRef, BaseSHA)
	ver        int64
	legacy     bool // read from a record of before categories
}

// categories lists the newest scans of the PR's pairs, in order.
func (r prRecord) categories() []scangate.CategoryScan {
	out := make([]scangate.CategoryScan, 0, len(r.cats))
	for _, c := range r.cats {
		out = append(out, c.CategoryScan)
	}
	scangate.SortCategories(out)
	return out
}

// prGate is the record's stored gate with its newest scans and head
// commit.
func (r prRecord) prGate() scangate.PRGate {
	return scangate.PRGate{PRID: r.ID, VcID: r.VcID, RepoID: r.RepoID, HeadSHA: r.headSHA, BaseRef: r.BaseRef, Gate: r.gate, Categories: r.categories()}
}

// asPR is the pull request the record is, its counts the sums over its
// newest scans.
func (r prRecord) asPR() scangate.PR {
	pr := r.PR
	pr.SecretCount, pr.VulnerabilityCount = r.counts()
	return pr
}

// counts sums the counts of the newest scans.
func (r prRecord) counts() (secrets, vulnerabilities int64) {
	for _, c := range r.cats {
		s, v := c.Counts()
		secrets, vulnerabilities = secrets+s, vulnerabilities+v
	}
	return secrets, vulnerabilities
}

// judge decides the PR's gate under p at at. The decision's sequence moves
// when it blocks otherwise or for other reasons. It reports whether the
// stored gate changes (its decision or its policy, or its evaluation
// for a new head commit: that gate change, which putPR counts, is
// evaluated at at, not when the decision was last made).
func (r prRecord) judge(p scangate.Policy, at scangate.Time) (prRecord, bool) {
	g := scangate.Decide(p, r.categories(), at)
	changed := !r.judged || r.headMoved || !g.Same(r.gate)
	if !r.judged || g.Blocked != r.gate.Blocked || !scangate.SameReasons(g.Reasons, r.gate.Reasons) {
		r.gseq++
	}
	if changed {
		r.gate, r.judged = g, true
	}
	return r, changed
}

// listingSK orders PRs by last scan, newest last (queries read backwards).
func (r prRecord) listingSK() string { return r.LastScan.String() + "#" + fmt.Sprintf("%019d", r.ID) }

func (r prRecord) item() item {
	it := prKey(r.VcID, r.RepoID, r.Number)
	it[aID] = num(r.ID)
	it[aPRNumber] = num(r.Number)
	it[aPRName] = str(r.Name)
	it[aPRLink] = str(r.Link)
	it[aRepoID] = num(r.RepoID)
	it[aVcID] = num(r.VcID)
	it[aWebhookID] = num(r.WebhookID)
	it[aCreatedAt] = str(r.CreatedAt.String())
	it[aLastScan] = str(r.LastScan.String())
	it[aLastScanID] = num(r.lastScanID)
	secrets, vulns := r.counts()
	it[aSecretCount] = num(secrets)
	it[aVulnCount] = num(vulns)
	cats := item{}
	for k, c := range r.cats {
		cats[k.attr()] = &types.AttributeValueMemberM{Value: item{
			aID: num(c.ScanID), "at": str(c.CreatedAt.String()), "st": str(c.Status), aSev: sevAttr(c.Sev), "cv": num(c.cver), "b": boolean(c.block)}}
		if cl := c.Class; cl.Classified {
			m := cats[k.attr()].(*types.AttributeValueMemberM).Value
			m[aClassified], m[aNewCount], m[aUnchCount], m[aAbsentCount] = boolean(true), num(cl.New), num(cl.Unchanged), num(cl.Absent)
			if cl.BaselineScanID != 0 {
				m[aBaseline], m[aBaselineMatch], m[aBaselineSHA] = num(cl.BaselineScanID), str(cl.Match), str(cl.BaselineSHA)
			}
		}
	}
	it[aCats] = &types.AttributeValueMemberM{Value: cats}
	g, _ := json.Marshal(r.gate) // plain values only
	it[aGate] = str(string(g))
	it[aBlocked] = boolean(r.gate.Blocked)
	it[aGateSeq] = num(r.gseq)
	if r.headSHA != "" {
		it[aHeadSHA], it[aHeadAt] = str(r.headSHA), str(r.headAt)
	}
	if r.repoName != "" {
		it[aRepoName] = str(r.repoName)
	}
	if r.baseAt != "" {
		it[aBaseRef], it[aBaseAt] = str(r.BaseRef), str(r.baseAt)
		if r.BaseSHA != "" {
			it[aBaseSHA] = str(r.BaseSHA)
		}
	}
	it[aVer] = num(r.ver)
	it[aGSI2PK] = str(allPRsPK)
	it[aGSI2SK] = str(r.listingSK())
	it[aGSI3PK] = str(repoPRsPK(r.VcID, r.RepoID))
	it[aGSI3SK] = str(r.listingSK())
	return it
}

func prFrom(it item) prRecord {
	r := prRecord{
		PR: scangate.PR{
			ID:                 getN(it, aID),
			Number:             getN(it, aPRNumber),
			Name:               getS(it, aPRName),
			Link:               getS(it, aPRLink),
			RepoID:             getN(it, aRepoID),
			VcID:               getN(it, aVcID),
			WebhookID:          getN(it, aWebhookID),
			CreatedAt:          getTime(it, aCreatedAt),
			LastScan:           getTime(it, aLastScan),
			SecretCount:        getN(it, aSecretCount),
			VulnerabilityCount: getN(it, aVulnCount),
			BaseRef:            getS(it, aBaseRef),
			BaseSHA:            getS(it, aBaseSHA),
		},
		baseAt:     getS(it, aBaseAt),
		lastScanID: getN(it, aLastScanID),
		cats:       map[catKey]catScan{},
		gseq:       getN(it, aGateSeq),
		headSHA:    getS(it, aHeadSHA),
		headAt:     getS(it, aHeadAt),
		repoName:   getS(it, aRepoName),
		ver:        getN(it, aVer),
	}
	m, ok := it[aCats].(*types.AttributeValueMemberM)
	if !ok {
		r.legacyCats(it)
	} else {
		for k, v := range m.Value {
			e, _ := v.(*types.AttributeValueMemberM)
			if e == nil {
				continue
			}
			typ, cat, _ := strings.Cut(k, "#")
			r.cats[catKey{scangate.ScanType(typ), cat}] = catScan{CategoryScan: scangate.CategoryScan{
				Type: scangate.ScanType(typ), Category: cat, ScanID: getN(e.Value, aID), CreatedAt: getTime(e.Value, "at"),
				Status: getS(e.Value, "st"), Sev: sevFrom(e.Value, aSev), Class: classFrom(e.Value)}, cver: getN(e.Value, "cv"), block: getBool(e.Value, "b", true)}
		}
	}
	if g := getS(it, aGate); g != "" && json.Unmarshal([]byte(g), &r.gate) == nil {
		r.judged = true
	} else {
		r.gate = scangate.Decide(scangate.DefaultPolicy(), r.categories(), r.LastScan)
		r.gate.Blocked = getBool(it, aBlocked, true)
	}
	return r
}

// Attributes of records of before categories: the newest scan of each
// type, its time and its block status.
const (
	aSecScan   = "sec_scan"
	aSecAt     = "sec_at"
	aSecBlock  = "sec_block"
	aVulnScan  = "vuln_scan"
	aVulnAt    = "vuln_at"
	aVulnBlock = "vuln_block"
)

// legacyCats reads a record of before categories: its newest scan of each
// type stands as category default, its count as findings of severity high
// (findings of before severities read as high). Such a record kept no
// status: a scan that blocked with no finding reads as pending (it
// blocked for its status). Writers read the scans themselves instead
// (exactCats), so the first write makes the record exact.
func (r *prRecord) legacyCats(it item) {
	r.legacy = true
	for _, t := range []struct {
		typ                        scangate.ScanType
		scan, at, block, countAttr string
	}{{scangate.ScanSecret, aSecScan, aSecAt, aSecBlock, aSecretCount}, {scangate.ScanVulnerability, aVulnScan, aVulnAt, aVulnBlock, aVulnCount}} {
		id := getN(it, t.scan)
		if id == 0 {
			continue
		}
		n, status := getN(it, t.countAttr), "completed"
		if getBool(it, t.block, true) && n == 0 {
			status = "pending"
		}
		at, _ := scangate.ParseTime(getS(it, t.at))
		r.cats[catKey{t.typ, scangate.DefaultCategory}] = catScan{CategoryScan: scangate.CategoryScan{Type: t.typ,
			Category: scangate.DefaultCategory, ScanID: id, CreatedAt: at, Status: status, Sev: scangate.SevCounts{0, n}},
			block: getBool(it, t.block, true)}
	}
}

// exactCats replaces the approximated cats of records of before
// categories with their scans as stored, and gives records of before
// repository names their newest scan's: one BatchGetItem, only when such
// a record is among recs.
func (s *Store) exactCats(ctx context.Context, recs map[string]prRecord) error {
	var keys []item
	for _, r := range recs {
		if r.legacy {
			for _, c := range r.cats {
				keys = append(keys, scanKey(c.ScanID))
			}
		}
		if r.repoName == "" && r.lastScanID != 0 {
			keys = append(keys, scanKey(r.lastScanID))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	items, err := s.batchGetAll(ctx, "get scans", keys)
	if err != nil {
		return err
	}
	scans := map[int64]item{}
	for _, it := range items {
		scans[getN(it, aID)] = it
	}
	for pk, r := range recs {
		if it, ok := scans[r.lastScanID]; ok && r.repoName == "" {
			r.repoName = getS(it, aRepoName)
		}
		if r.legacy {
			for k, c := range r.cats {
				if it, ok := scans[c.ScanID]; ok {
					sc := scanFrom(it)
					c.Status, c.Sev, c.cver, c.block = sc.Status, sc.Sev, getN(it, aCountVer), sc.BlockStatus
					r.cats[k] = c
				}
			}
			r.legacy = false
		}
		recs[pk] = r
	}
	return nil
}

// sevAttr is a list of counts per severity.
func sevAttr(c scangate.SevCounts) types.AttributeValue { return numList(c[:]) }

func sevFrom(it item, name string) scangate.SevCounts {
	var c scangate.SevCounts
	copy(c[:], getIDs(it, name))
	return c
}

func prIDItem(r prRecord) item {
	it := prIDKey(r.ID)
	it[aVcID], it[aRepoID], it[aPRNumber] = num(r.VcID), num(r.RepoID), num(r.Number)
	return it
}

// newer reports whether (at, id) is newer than (oldAt, oldID): a greater
// created_at, ties going to the greater id. Times share one fixed format,
// so they compare as strings.
func newer(at string, id int64, oldAt string, oldID int64) bool {
	return oldID == 0 || at > oldAt || at == oldAt && id > oldID
}

// orderOf is a scan's place in its PR's order, as one string.
func orderOf(sc scangate.Scan) string {
	return sc.CreatedAt.String() + "#" + fmt.Sprintf("%019d", sc.ID)
}

// with returns the record once sc is recorded: the newest scan overall sets
// last_scan, the PR's name and link and the repository's name; the newest of its (type, category)
// stands for that pair; the newest that named a commit sets head_sha. It
// reports whether anything changed. The gate is judged apart (judge).
func (r prRecord) with(sc scangate.Scan, ref scangate.PRRef) (prRecord, bool) {
	at := sc.CreatedAt.String()
	changed := false
	if newer(at, sc.ID, r.LastScan.String(), r.lastScanID) {
		r.LastScan, r.lastScanID, r.Name, r.Link, r.repoName = sc.CreatedAt, sc.ID, ref.Name, ref.Link, sc.RepoName
		changed = true
	}
	k := catKeyOf(sc)
	if old, ok := r.cats[k]; !ok || newer(at, sc.ID, old.CreatedAt.String(), old.ScanID) {
		cats := make(map[catKey]catScan, len(r.cats)+1)
		for kk, v := range r.cats {
			cats[kk] = v
		}
		cats[k] = catScan{CategoryScan: scangate.CategoryScan{Type: sc.Type, Category: k.category, ScanID: sc.ID,
			CreatedAt: sc.CreatedAt, Status: sc.Status, Sev: sc.Sev, Class: sc.Class}, block: sc.BlockStatus}
		r.cats, changed = cats, true
	}
	if sc.BaseRef != "" && orderOf(sc) > r.baseAt {
		r.BaseRef, r.BaseSHA, r.baseAt, changed = sc.BaseRef, sc.BaseSHA, orderOf(sc), true
	}
	if sc.CommitSHA != "" && orderOf(sc) > r.headAt {
		r.headMoved = r.headMoved || sc.CommitSHA != r.headSHA
		r.headSHA, r.headAt, changed = sc.CommitSHA, orderOf(sc), true
	}
	return r, changed
}

// withSev returns the record with the counts and block status of its
// newest scan of a pair as a re-evaluation leaves them, at the scan's
// next count version.
func (r prRecord) withSev(k catKey, sev scangate.SevCounts, block bool, cver int64) prRecord {
	cats := make(map[catKey]catScan, len(r.cats))
	for kk, v := range r.cats {
		cats[kk] = v
	}
	c := cats[k]
	c.Sev, c.block, c.cver = sev, block, cver
	cats[k] = c
	r.cats = cats
	return r
}

// newest reports whether sc is the PR's newest scan of its pair.
func (r prRecord) newest(sc scangate.Scan) bool {
	c, ok := r.cats[catKeyOf(sc)]
	return ok && c.ScanID == sc.ID
}

// prRecord reads a PR record by its identity with a consistent read.
func (s *Store) prRecord(ctx context.Context, vcID, repoID, number int64) (prRecord, bool, error) {
	it, err := s.getItem(ctx, "get PR", prKey(vcID, repoID, number))
	if err != nil || it == nil {
		return prRecord{}, false, err
	}
	return prFrom(it), true, nil
}

// PR reads a pull request by its internal id: two round trips.
func (s *Store) PR(ctx context.Context, id int64) (scangate.PR, error) {
	r, err := s.prByID(ctx, id)
	return r.PR, err
}

// prByID reads a PR record by its internal id: its id item, then the
// record.
func (s *Store) prByID(ctx context.Context, id int64) (prRecord, error) {
	it, err := s.getItem(ctx, "get PR id", prIDKey(id))
	if err != nil {
		return prRecord{}, err
	}
	if it != nil {
		r, found, err := s.prRecord(ctx, getN(it, aVcID), getN(it, aRepoID), getN(it, aPRNumber))
		if err != nil || found {
			return r, err
		}
	}
	return prRecord{}, scangate.Errorf(scangate.KindNotFound, "no pull request has the id %d", id)
}

// PRGate reads a pull request's stored gate with its newest scans and its
// head commit: two round trips (its id item, then its record).
func (s *Store) PRGate(ctx context.Context, id int64) (scangate.PRGate, error) {
	r, err := s.prByID(ctx, id)
	if err != nil {
		return scangate.PRGate{}, err
	}
	return r.prGate(), nil
}
