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

	"github.com/scangate/scangate/pkg/scangate"
)

// The read side (DESIGN.md section 6). Each page is one Query of one
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
	allPRsPK        = "PRS"
	allAllowlistsPK = "ALLOWS"
	allUsersPK      = "USERS"
)

// repoPRsPK is the GSI3 partition of one repository's PRs.
func repoPRsPK(vcID, repoID int64) string { return fmt.Sprintf("PRS#%d#%d", vcID, repoID) }

// filteredReads is how many items a filtered page reads at least (within
// DynamoDB's 1 MB a Query), so that a selective filter still fills pages
// rather than answering a run of nearly empty ones.
const filteredReads = 500

// listPage reads one page of a listing: queryPage, reading further ahead
// when a filter may drop items, and cut back to limit.
func (s *Store) listPage(ctx context.Context, op string, q pageQuery, limit int, after map[string]string) (Page, error) {
	if q.filter == "" {
		return s.queryPage(ctx, op, q, limit, after)
	}
	p, err := s.queryPage(ctx, op, q, max(limit, filteredReads), after)
	if err != nil || len(p.Items) <= limit {
		return p, err
	}
	p.Items = p.Items[:limit]
	p.Next = q.pageKey(p.Items[limit-1])
	return p, nil
}

// withFilter adds a condition to a query's filter expression.
func (q *pageQuery) withFilter(expr string, values item) {
	if q.filter != "" {
		expr = q.filter + " AND " + expr
	}
	q.filter, q.values = expr, merge(q.values, values)
}

// FindingsPage reads a page of a scan's findings in the order they were
// recorded; with suppressed set, only those that are (or are not)
// suppressed. The findings are read strongly consistent, so they show the
// judgement of every allowlist change that has answered. The first page
// also reads the scan, alongside: a scan that does not exist (or whose
// recording has not committed) is not found. Two round trips for the first
// page, one for the next.
func (s *Store) FindingsPage(ctx context.Context, scanID int64, suppressed *bool, limit int, after map[string]string) ([]scangate.RecordedFinding, map[string]string, error) {
	q := pageQuery{pk: aPK, sk: aSK, value: scanPK(scanID), prefix: "FINDING#", strong: true}
	if suppressed != nil {
		q.withFilter(ref(aSup)+" = :sup", item{":sup": boolean(*suppressed)})
	}
	var scan []item
	var scanErr error
	var wg sync.WaitGroup
	if after == nil {
		wg.Go(func() { scan, scanErr = s.batchGet(ctx, "get scan", []item{scanKey(scanID)}) })
	}
	p, err := s.listPage(ctx, "list findings", q, limit, after)
	wg.Wait()
	switch {
	case scanErr != nil:
		return nil, nil, scanErr
	case err != nil:
		return nil, nil, err
	case after == nil && len(scan) == 0:
		return nil, nil, scangate.Errorf(scangate.KindNotFound, "no scan has the id %d", scanID)
	}
	out := make([]scangate.RecordedFinding, 0, len(p.Items))
	for _, it := range p.Items {
		out = append(out, recordedFinding(it))
	}
	return out, p.Next, nil
}

// recordedFinding reads a finding item as the API shows it.
func recordedFinding(it item) scangate.RecordedFinding {
	i, _ := strconv.Atoi(strings.TrimPrefix(getS(it, aSK), "FINDING#"))
	var by []int64
	for _, ids := range byFrom(it) {
		by = append(by, ids...)
	}
	slices.Sort(by)
	return scangate.RecordedFinding{
		Index: i, Name: getS(it, aName), Aliases: getStrings(it, aAliases),
		Rule: getS(it, aRule), Path: getS(it, aPath), Line: getNp(it, aLine),
		Suppressed: getBool(it, aSup, false), SuppressedBy: slices.Compact(by),
	}
}

// prScansPK is the GSI3 partition of a PR's scans.
func prScansPK(prID int64) string { return "PRSCANS#" + strconv.FormatInt(prID, 10) }

// prScansSK orders a PR's scans by creation, ties to the greater id.
func prScansSK(sc scangate.Scan) string {
	return sc.CreatedAt.String() + "#" + fmt.Sprintf("%019d", sc.ID)
}

// PRScansPage reads a page of a pull request's scans, newest first; with
// t set, only scans of that type. It returns the PR record with them (each
// scan shows it), read by the key its scans name; a page without scans
// reads the PR's id item instead, to tell an unknown PR (not found). One
// Query and one BatchGetItem.
func (s *Store) PRScansPage(ctx context.Context, prID int64, t scangate.ScanType, limit int, after map[string]string) ([]scangate.Scan, scangate.PR, map[string]string, error) {
	q := pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: prScansPK(prID), newest: true}
	if t != "" {
		q.withFilter(ref(aScanType)+" = :type", item{":type": str(string(t))})
	}
	p, err := s.listPage(ctx, "list a PR's scans", q, limit, after)
	if err != nil {
		return nil, scangate.PR{}, nil, err
	}
	scans := make([]scangate.Scan, 0, len(p.Items))
	for _, it := range p.Items {
		scans = append(scans, scanFrom(it))
	}
	k := prIDKey(prID)
	if len(scans) > 0 {
		k = prKey(scans[0].VcID, scans[0].RepoID, scans[0].PRNumber)
	}
	items, err := s.batchGet(ctx, "get PR", []item{k})
	switch {
	case err != nil:
		return nil, scangate.PR{}, nil, err
	case len(items) == 0 && len(scans) > 0:
		return nil, scangate.PR{}, nil, fmt.Errorf("PR %d: its record is missing, its scans are not", prID)
	case len(items) == 0:
		return nil, scangate.PR{}, nil, scangate.Errorf(scangate.KindNotFound, "no pull request has the id %d", prID)
	case len(scans) == 0:
		return scans, scangate.PR{}, p.Next, nil
	}
	return scans, prFrom(items[0]).PR, p.Next, nil
}

// PRsPage reads a page of pull requests by last scan, newest first: all of
// them, or one repository's; with f.Blocked set, only those that are (or
// are not) blocked. One Query.
func (s *Store) PRsPage(ctx context.Context, f scangate.PRFilter, limit int, after map[string]string) ([]scangate.PR, map[string]string, error) {
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allPRsPK, newest: true}
	if f.VcID != 0 || f.RepoID != 0 {
		q = pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: repoPRsPK(f.VcID, f.RepoID), newest: true}
	}
	if f.Blocked != nil {
		q.withFilter(ref(aBlocked)+" = :blocked", item{":blocked": boolean(*f.Blocked)})
	}
	p, err := s.listPage(ctx, "list PRs", q, limit, after)
	if err != nil {
		return nil, nil, err
	}
	out := make([]scangate.PR, 0, len(p.Items))
	for _, it := range p.Items {
		out = append(out, prFrom(it).PR)
	}
	return out, p.Next, nil
}

// AllowlistsPage reads a page of allowlists, newest first, by f. A name
// reads the GSI3 partition of that name ignoring case and keeps the
// vulnerability allowlists (matched ignoring case) and the secret ones of
// exactly that name. One Query.
func (s *Store) AllowlistsPage(ctx context.Context, f scangate.AllowlistFilter, limit int, after map[string]string) ([]scangate.Allowlist, map[string]string, error) {
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allAllowlistsPK, newest: true}
	if f.Name != "" {
		q = pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: allowNamePK(f.Name), newest: true}
		q.withFilter("("+ref(aType)+" = :vuln OR "+ref(aName)+" = :name)",
			item{":vuln": str(string(scangate.ScanVulnerability)), ":name": str(f.Name)})
	}
	if f.Type != "" {
		q.withFilter(ref(aType)+" = :type", item{":type": str(string(f.Type))})
	}
	if f.Active != nil {
		q.withFilter(ref(aActive)+" = :active", item{":active": boolean(*f.Active)})
	}
	p, err := s.listPage(ctx, "list allowlists", q, limit, after)
	if err != nil {
		return nil, nil, err
	}
	out := make([]scangate.Allowlist, 0, len(p.Items))
	for _, it := range p.Items {
		a, _ := allowFrom(it)
		out = append(out, a)
	}
	return out, p.Next, nil
}

// UsersPage reads a page of users by id, by f. One Query.
func (s *Store) UsersPage(ctx context.Context, f scangate.UserFilter, limit int, after map[string]string) ([]scangate.User, map[string]string, error) {
	q := pageQuery{index: GSI2, pk: aGSI2PK, sk: aGSI2SK, value: allUsersPK}
	if f.Role != "" {
		q.withFilter(ref(aRole)+" = :role", item{":role": str(string(f.Role))})
	}
	if f.Active != nil {
		q.withFilter(ref(aActive)+" = :active", item{":active": boolean(*f.Active)})
	}
	p, err := s.listPage(ctx, "list users", q, limit, after)
	if err != nil {
		return nil, nil, err
	}
	out := make([]scangate.User, 0, len(p.Items))
	for _, it := range p.Items {
		out = append(out, userFrom(it))
	}
	return out, p.Next, nil
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
