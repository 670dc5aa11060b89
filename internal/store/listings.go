package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// The read side (docs/API.md, Reading). Each page is one Query of one
// partition, of the table or of an index, plus at most one BatchGetItem:
//
//	a scan's findings    SCAN#<id>, SK begins with FINDING#; the scan itself on the first page
//	a PR's scans         GSI3 PRSCANS#<pr id> / <created_at>#<scan id>, newest first; then its PR
//	all PRs              GSI2 PRS / <last_scan>#<pr id>, newest first
//	a repository's PRs   GSI3 PRS#<vc>#<repo> / the same
//	allowlists           GSI2 ALLOWS / <id>, newest first; by name GSI3 ALLOWNAME#<NAME> / <id>
//	users                GSI2 USERS / <id>
//	an allowlist         ALLOW#<id>: the allowlist and its comments, in one Query
//
// Filters that the key cannot express (blocked, suppressed, type, role,
// active) are filter expressions of the same Query.

// Partitions of the listings that span the table (GSI2).
const (
	allPRsPK        = KeyPRs
	allAllowlistsPK = KeyAllows
	allUsersPK      = KeyUsers
)

// repoPRsPK is the GSI3 partition of one repository's PRs.
func repoPRsPK(vcID, repoID int64) string { return KeyRepoPRs + fmt.Sprintf("%d#%d", vcID, repoID) }

// A filter is applied to what the Query reads, in Go, not as a
// FilterExpression: DynamoDB bills the items a Query reads, filtered or
// not, and so it behaves alike on every DynamoDB-API server (the embedded
// one counts other partitions' items towards Limit once a FilterExpression
// is set). A filtered page reads up to filteredReads(limit) items, so that
// a selective filter still fills pages rather than answering a run of
// nearly empty ones (docs/DECISIONS.md).
func filteredReads(limit int) int { return min(max(4*limit, 25), 400) }

// listPage reads one page of a listing: the items of one Query that keep
// accepts (all, when keep is nil), at most limit, and the key to go on
// from.
func (s *Store) listPage(ctx context.Context, op string, q pageQuery, keep func(item) bool, limit int, after map[string]string) (Page, error) {
	if keep == nil {
		return s.queryPage(ctx, op, q, limit, after)
	}
	p, err := s.queryPage(ctx, op, q, filteredReads(limit), after)
	if err != nil {
		return Page{}, err
	}
	kept := make([]item, 0, limit)
	for _, it := range p.Items {
		if !keep(it) {
			continue
		}
		if len(kept) == limit { // one more: the next page starts after the last kept
			return Page{Items: kept, Next: q.pageKey(kept[limit-1])}, nil
		}
		kept = append(kept, it)
	}
	return Page{Items: kept, Next: p.Next}, nil
}

// filters are the conditions of a listing's filter; all must hold.
type filters []func(item) bool

func (f filters) keep() func(item) bool {
	if len(f) == 0 {
		return nil
	}
	return func(it item) bool {
		for _, ok := range f {
			if !ok(it) {
				return false
			}
		}
		return true
	}
}

func boolIs(name string, want *bool, def bool) func(item) bool {
	return func(it item) bool { return getBool(it, name, def) == *want }
}

func stringIs(name, want string) func(item) bool {
	return func(it item) bool { return getS(it, name) == want }
}

// FindingsPage reads a page of a scan's findings in the order they were
// recorded; with f.Suppressed set, only those that are (or are not)
// suppressed; with f.Severity, only those at or above it. The findings are read strongly consistent, so they show the
// judgement of every allowlist change that has answered. The first page
// also reads the scan, alongside: a scan that does not exist (or whose
// recording has not committed) is not found. Two round trips for the first
// page, one for the next.
func (s *Store) FindingsPage(ctx context.Context, scanID int64, ff scangate.FindingFilter, limit int, after map[string]string) (scangate.Page[scangate.RecordedFinding], error) {
	q := pageQuery{pk: aPK, sk: aSK, value: scanPK(scanID), prefix: KeyFinding, strong: true}
	var f filters
	if ff.Suppressed != nil {
		f = append(f, boolIs(aSup, ff.Suppressed, false))
	}
	if ff.Severity != "" {
		f = append(f, func(it item) bool { return severityOf(scangate.Severity(getS(it, aSev))).AtLeast(ff.Severity) })
	}
	if ff.BaselineState != "" {
		f = append(f, stringIs(aBaselineState, ff.BaselineState))
	}
	var scan []item
	var scanErr error
	var wg sync.WaitGroup
	if after == nil {
		wg.Go(func() { scan, scanErr = s.batchGet(ctx, "get scan", []item{scanKey(scanID)}) })
	}
	p, err := s.listPage(ctx, "list findings", q, f.keep(), limit, after)
	wg.Wait()
	switch {
	case scanErr != nil:
		return scangate.Page[scangate.RecordedFinding]{}, scanErr
	case err != nil:
		return scangate.Page[scangate.RecordedFinding]{}, err
	case after == nil && len(scan) == 0:
		return scangate.Page[scangate.RecordedFinding]{}, scangate.Errorf(scangate.KindNotFound, "no scan has the id %d", scanID)
	}
	return pageOf(q, p, recordedFinding), nil
}

// ScanRepo reads the repository of a scan: one BatchGetItem of its item,
// as the first page of its findings reads it.
func (s *Store) ScanRepo(ctx context.Context, scanID int64) (scangate.RepoRef, error) {
	items, err := s.batchGet(ctx, "get scan", []item{scanKey(scanID)})
	if err != nil {
		return scangate.RepoRef{}, err
	}
	if len(items) == 0 {
		return scangate.RepoRef{}, scangate.Errorf(scangate.KindNotFound, "no scan has the id %d", scanID)
	}
	return scangate.RepoRef{VcID: getN(items[0], aVcID), RepoID: getN(items[0], aRepoID)}, nil
}

// recordedFinding reads a finding item as the API shows it.
func recordedFinding(it item) scangate.RecordedFinding {
	i, _ := strconv.Atoi(strings.TrimPrefix(getS(it, aSK), KeyFinding))
	var by []int64
	for _, ids := range byFrom(it) {
		by = append(by, ids...)
	}
	slices.Sort(by)
	return scangate.RecordedFinding{
		Index: i, Name: getS(it, aName), Aliases: getStrings(it, aAliases),
		Rule: getS(it, aRule), Path: getS(it, aPath), Line: getNp(it, aLine),
		Suppressed: getBool(it, aSup, false), SuppressedBy: slices.Compact(by), InSource: getBool(it, aInSource, false),
		Severity:    severityOf(scangate.Severity(getS(it, aSev))),
		Fingerprint: getS(it, aFP), FingerprintSource: getS(it, aFPSource),
		BaselineState: getS(it, aBaselineState),
	}
}

// prScansPK is the GSI3 partition of a PR's scans.
func prScansPK(prID int64) string { return KeyPRScans + strconv.FormatInt(prID, 10) }

// prScansSK orders a PR's scans by creation, ties to the greater id.
func prScansSK(sc scangate.Scan) string {
	return sc.CreatedAt.String() + "#" + fmt.Sprintf("%019d", sc.ID)
}

// PRScansPage reads a page of a pull request's scans, newest first; with
// t set, only scans of that type. It returns the PR record with them (each
// scan shows it), read by the key its scans name; a page without scans
// reads the PR's id item instead, to tell an unknown PR (not found). One
// Query and one BatchGetItem.
func (s *Store) PRScansPage(ctx context.Context, prID int64, t scangate.ScanType, limit int, after map[string]string) (scangate.Page[scangate.Scan], scangate.PR, error) {
	q := pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: prScansPK(prID), newest: true}
	var f filters
	if t != "" {
		f = append(f, stringIs(aScanType, string(t)))
	}
	p, err := s.listPage(ctx, "list a PR's scans", q, f.keep(), limit, after)
	if err != nil {
		return scangate.Page[scangate.Scan]{}, scangate.PR{}, err
	}
	scans := pageOf(q, p, scanFrom)
	k := prIDKey(prID)
	if len(scans.Items) > 0 {
		k = prKey(scans.Items[0].VcID, scans.Items[0].RepoID, scans.Items[0].PRNumber)
	}
	items, err := s.batchGet(ctx, "get PR", []item{k})
	switch {
	case err != nil:
		return scangate.Page[scangate.Scan]{}, scangate.PR{}, err
	case len(items) == 0 && len(scans.Items) > 0:
		return scangate.Page[scangate.Scan]{}, scangate.PR{}, fmt.Errorf("PR %d: its record is missing, its scans are not", prID)
	case len(items) == 0:
		return scangate.Page[scangate.Scan]{}, scangate.PR{}, scangate.Errorf(scangate.KindNotFound, "no pull request has the id %d", prID)
	case len(scans.Items) == 0:
		// The PR's id item names its repository (a token scoped to
		// repositories is checked against it).
		return scans, scangate.PR{ID: prID, VcID: getN(items[0], aVcID), RepoID: getN(items[0], aRepoID)}, nil
	}
	return scans, prFrom(items[0]).PR, nil
}

// PRsPage reads a page of pull requests by last scan, newest first: all of
// them, or one repository's; with f.Blocked set, only those that are (or
// are not) blocked; with f.RepoName, those of that repository name (its
// newest scan's, ignoring ASCII case). One Query.
func (s *Store) PRsPage(ctx context.Context, f scangate.PRFilter, limit int, after map[string]string) (scangate.Page[scangate.PR], error) {
	if f.Number != 0 {
		return s.prByNumber(ctx, f)
	}
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allPRsPK, newest: true}
	if f.VcID != 0 || f.RepoID != 0 {
		q = pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: repoPRsPK(f.VcID, f.RepoID), newest: true}
	}
	var keep filters
	if f.Blocked != nil {
		keep = append(keep, boolIs(aBlocked, f.Blocked, true))
	}
	if f.RepoName != "" {
		keep = append(keep, func(it item) bool { return strings.EqualFold(getS(it, aRepoName), f.RepoName) })
	}
	if f.Repos != nil {
		keep = append(keep, func(it item) bool {
			return slices.Contains(f.Repos, scangate.RepoRef{VcID: getN(it, aVcID), RepoID: getN(it, aRepoID)})
		})
	}
	p, err := s.listPage(ctx, "list PRs", q, keep.keep(), limit, after)
	if err != nil {
		return scangate.Page[scangate.PR]{}, err
	}
	return pageOf(q, p, func(it item) scangate.PR { return prFrom(it).PR }), nil
}

// prByNumber is the page of the one PR of a number in a repository (none
// if it has no scan, or if Blocked leaves it out): one GetItem of its
// record, keyed by that identity. The page never has a next one.
func (s *Store) prByNumber(ctx context.Context, f scangate.PRFilter) (scangate.Page[scangate.PR], error) {
	if f.Repos != nil && !slices.Contains(f.Repos, scangate.RepoRef{VcID: f.VcID, RepoID: f.RepoID}) {
		return scangate.Page[scangate.PR]{Items: []scangate.PR{}}, nil
	}
	r, found, err := s.prRecord(ctx, f.VcID, f.RepoID, f.Number)
	if err != nil || !found || f.Blocked != nil && r.gate.Blocked != *f.Blocked || f.RepoName != "" && !strings.EqualFold(r.repoName, f.RepoName) {
		return scangate.Page[scangate.PR]{Items: []scangate.PR{}}, err
	}
	return scangate.Page[scangate.PR]{Items: []scangate.PR{r.PR}, After: []map[string]string{nil}}, nil
}

// AllowlistsPage reads a page of allowlists, newest first, by f. A name
// reads the GSI3 partition of that name's key (scangate.FindingKey) and
// keeps the allowlists whose name names it as suppression matches
// (scangate.SameName: vulnerabilities ignoring ASCII case, secrets
// exactly). One Query.
func (s *Store) AllowlistsPage(ctx context.Context, f scangate.AllowlistFilter, limit int, after map[string]string) (scangate.Page[scangate.Allowlist], error) {
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allAllowlistsPK, newest: true}
	var keep filters
	if f.Name != "" {
		q = pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: allowNamePK(f.Name), newest: true}
		keep = append(keep, func(it item) bool {
			return scangate.SameName(scangate.ScanType(getS(it, aType)), getS(it, aName), f.Name)
		})
	}
	if f.Type != "" {
		keep = append(keep, stringIs(aType, string(f.Type)))
	}
	if f.Active != nil {
		keep = append(keep, boolIs(aActive, f.Active, false))
	}
	p, err := s.listPage(ctx, "list allowlists", q, keep.keep(), limit, after)
	if err != nil {
		return scangate.Page[scangate.Allowlist]{}, err
	}
	return pageOf(q, p, func(it item) scangate.Allowlist { a, _ := allowFrom(it); return a }), nil
}

// UsersPage reads a page of users by id, by f. One Query.
func (s *Store) UsersPage(ctx context.Context, f scangate.UserFilter, limit int, after map[string]string) (scangate.Page[scangate.User], error) {
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allUsersPK}
	var keep filters
	if f.Role != "" {
		keep = append(keep, stringIs(aRole, string(f.Role)))
	}
	if f.Active != nil {
		keep = append(keep, boolIs(aActive, f.Active, true))
	}
	p, err := s.listPage(ctx, "list users", q, keep.keep(), limit, after)
	if err != nil {
		return scangate.Page[scangate.User]{}, err
	}
	return pageOf(q, p, userFrom), nil
}

// AllowlistDetail reads an allowlist with its comments, oldest first: one
// strongly consistent Query of its partition (the allowlist item and at
// most MaxComments comments, far below a Query's 1 MB).
func (s *Store) AllowlistDetail(ctx context.Context, id int64) (scangate.Allowlist, []scangate.Comment, error) {
	items, err := s.queryAll(ctx, "get allowlist", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk"),
		ExpressionAttributeValues: item{":pk": str(allowPK(id))},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return scangate.Allowlist{}, nil, err
	}
	var a scangate.Allowlist
	found := false
	comments := []scangate.Comment{}
	for _, it := range items {
		switch sk := getS(it, aSK); {
		case sk == "ALLOW":
			a, _ = allowFrom(it)
			found = true
		case strings.HasPrefix(sk, "COMMENT#"):
			comments = append(comments, scangate.Comment{ID: getN(it, aID), Text: getS(it, aText),
				By: getN(it, aCommentBy), At: getTime(it, aCommentAt)})
		}
	}
	if !found {
		return scangate.Allowlist{}, nil, scangate.Errorf(scangate.KindNotFound, "no allowlist has the id %d", id)
	}
	return a, comments, nil
}
