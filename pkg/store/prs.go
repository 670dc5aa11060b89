package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/scangate/scangate/pkg/scangate"
)

// A PR record is keyed by its identity (integration, repository, number),
// so it is its own uniqueness marker; a PRID item maps its internal id to
// that identity. It keeps, besides the PR object of the API, its newest
// scan of each type with that scan's block status, and whether the PR is
// blocked (the newest scan of either type blocks), for the listing of PRs
// by last scan (GSI2 for all PRs, GSI3 per repository).
//
//	PR#<vc>#<repo>#<number> / PR    GSI2: PRS / <last_scan>#<id>; GSI3: PRS#<vc>#<repo> / same
//	PRID#<id> / PRID                vc_id, repo_id, pr_number

func prKey(vcID, repoID, number int64) item {
	return key(fmt.Sprintf("PR#%d#%d#%d", vcID, repoID, number), "PR")
}

func prIDKey(id int64) item { return key("PRID#"+strconv.FormatInt(id, 10), "PRID") }

// prRecord is a PR record with what deciding its newest scans needs.
type prRecord struct {
	scangate.PR
	lastScanID int64 // newest scan overall
	secScan    int64 // newest SECRET scan, 0 if none
	secAt      string
	secBlock   bool  // its block status
	vulnScan   int64 // newest VULNERABILITY scan, 0 if none
	vulnAt     string
	vulnBlock  bool
	ver        int64
}

// blocked reports whether the PR is blocked: the newest scan of either
// type blocks.
func (r prRecord) blocked() bool {
	return r.secScan != 0 && r.secBlock || r.vulnScan != 0 && r.vulnBlock
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
	it[aSecScan] = num(r.secScan)
	it[aSecAt] = str(r.secAt)
	it[aSecBlock] = boolean(r.secBlock)
	it[aSecretCount] = num(r.SecretCount)
	it[aVulnScan] = num(r.vulnScan)
	it[aVulnAt] = str(r.vulnAt)
	it[aVulnBlock] = boolean(r.vulnBlock)
	it[aVulnCount] = num(r.VulnerabilityCount)
	it[aBlocked] = boolean(r.blocked())
	it[aVer] = num(r.ver)
	it[aGSI2PK] = str(allPRsPK)
	it[aGSI2SK] = str(r.listingSK())
	it[aGSI3PK] = str(repoPRsPK(r.VcID, r.RepoID))
	it[aGSI3SK] = str(r.listingSK())
	return it
}

func prFrom(it item) prRecord {
	return prRecord{
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
		},
		lastScanID: getN(it, aLastScanID),
		secScan:    getN(it, aSecScan),
		secAt:      getS(it, aSecAt),
		secBlock:   getBool(it, aSecBlock, true),
		vulnScan:   getN(it, aVulnScan),
		vulnAt:     getS(it, aVulnAt),
		vulnBlock:  getBool(it, aVulnBlock, true),
		ver:        getN(it, aVer),
	}
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

// with returns the record once sc is recorded: the newest scan overall sets
// last_scan and the PR's name and link; the newest of each type sets that
// type's count and block status. It reports whether anything changed.
func (r prRecord) with(sc scangate.Scan, ref scangate.PRRef) (prRecord, bool) {
	at := sc.CreatedAt.String()
	changed := false
	if newer(at, sc.ID, r.LastScan.String(), r.lastScanID) {
		r.LastScan, r.lastScanID, r.Name, r.Link = sc.CreatedAt, sc.ID, ref.Name, ref.Link
		changed = true
	}
	switch sc.Type {
	case scangate.ScanSecret:
		if newer(at, sc.ID, r.secAt, r.secScan) {
			r.secScan, r.secAt, r.SecretCount, r.secBlock = sc.ID, at, sc.SecretCount, sc.BlockStatus
			changed = true
		}
	case scangate.ScanVulnerability:
		if newer(at, sc.ID, r.vulnAt, r.vulnScan) {
			r.vulnScan, r.vulnAt, r.VulnerabilityCount, r.vulnBlock = sc.ID, at, sc.VulnerabilityCount, sc.BlockStatus
			changed = true
		}
	}
	return r, changed
}

// withCounts returns the record with the counts and block status of its
// newest scan of a type changed, as a re-evaluation leaves them.
func (r prRecord) withCounts(sc scangate.Scan, n int64, block bool) prRecord {
	switch sc.Type {
	case scangate.ScanSecret:
		r.SecretCount, r.secBlock = n, block
	case scangate.ScanVulnerability:
		r.VulnerabilityCount, r.vulnBlock = n, block
	}
	return r
}

// newest reports whether sc is the PR's newest scan of its type.
func (r prRecord) newest(sc scangate.Scan) bool {
	return sc.Type == scangate.ScanSecret && r.secScan == sc.ID || sc.Type == scangate.ScanVulnerability && r.vulnScan == sc.ID
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
	it, err := s.getItem(ctx, "get PR id", prIDKey(id))
	if err != nil {
		return scangate.PR{}, err
	}
	if it != nil {
		r, found, err := s.prRecord(ctx, getN(it, aVcID), getN(it, aRepoID), getN(it, aPRNumber))
		if err != nil || found {
			return r.PR, err
		}
	}
	return scangate.PR{}, scangate.Errorf(scangate.KindNotFound, "no pull request has the id %d", id)
}
