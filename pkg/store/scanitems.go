package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

func scanKey(id int64) item { return key(scanPK(id), "SCAN") }

func scanItem(sc scangate.Scan) item {
	it := scanKey(sc.ID)
	it[aID] = num(sc.ID)
	it[aPRRef] = num(sc.PRID)
	it[aPRNumber] = num(sc.PRNumber)
	it[aVcID] = num(sc.VcID)
	it[aWebhookID] = num(sc.WebhookID)
	it[aRepoID] = num(sc.RepoID)
	it[aVcType] = str(sc.VcType)
	it[aScanType] = str(string(sc.Type))
	it[aCreatedAt] = str(sc.CreatedAt.String())
	it[aVcName] = str(sc.VcName)
	it[aRepoName] = str(sc.RepoName)
	it[aStatus] = str(sc.Status)
	it[aBlockStatus] = boolean(sc.BlockStatus)
	if len(sc.OtherDetails) > 0 {
		it[aOtherDetails] = str(string(sc.OtherDetails))
	}
	if sc.StatURL != nil {
		it[aStatURL] = str(*sc.StatURL)
	}
	it[aSecretCount] = num(sc.SecretCount)
	it[aVulnCount] = num(sc.VulnerabilityCount)
	it[aCountVer] = num(0)
	return it
}

// scanFrom reads a scan item. Absent attributes read as the spec's
// defaults: status pending, block_status true, counts 0, other_details {}.
func scanFrom(it item) scangate.Scan {
	sc := scangate.Scan{
		ID:                 getN(it, aID),
		PRID:               getN(it, aPRRef),
		PRNumber:           getN(it, aPRNumber),
		VcID:               getN(it, aVcID),
		WebhookID:          getN(it, aWebhookID),
		RepoID:             getN(it, aRepoID),
		VcType:             getS(it, aVcType),
		Type:               scangate.ScanType(getS(it, aScanType)),
		CreatedAt:          getTime(it, aCreatedAt),
		VcName:             getS(it, aVcName),
		RepoName:           getS(it, aRepoName),
		Status:             getS(it, aStatus),
		BlockStatus:        getBool(it, aBlockStatus, true),
		OtherDetails:       json.RawMessage(getS(it, aOtherDetails)),
		SecretCount:        getN(it, aSecretCount),
		VulnerabilityCount: getN(it, aVulnCount),
	}
	if sc.Status == "" {
		sc.Status = scangate.ScanStatuses[0]
	}
	if len(sc.OtherDetails) == 0 {
		sc.OtherDetails = json.RawMessage("{}")
	}
	if v, ok := it[aStatURL].(*types.AttributeValueMemberS); ok {
		sc.StatURL = &v.Value
	}
	return sc
}

// prRecord is a PR record with what deciding its newest scans needs.
type prRecord struct {
	scangate.PR
	lastScanID int64 // newest scan overall
	secScan    int64 // newest SECRET scan, 0 if none
	secAt      string
	vulnScan   int64 // newest VULNERABILITY scan, 0 if none
	vulnAt     string
	ver        int64
}

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
	it[aSecretCount] = num(r.SecretCount)
	it[aVulnScan] = num(r.vulnScan)
	it[aVulnAt] = str(r.vulnAt)
	it[aVulnCount] = num(r.VulnerabilityCount)
	it[aVer] = num(r.ver)
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
		vulnScan:   getN(it, aVulnScan),
		vulnAt:     getS(it, aVulnAt),
		ver:        getN(it, aVer),
	}
}

// newer reports whether (at, id) is newer than (oldAt, oldID): a greater
// created_at, ties going to the greater id. Times share one fixed format,
// so they compare as strings.
func newer(at string, id int64, oldAt string, oldID int64) bool {
	return oldID == 0 || at > oldAt || at == oldAt && id > oldID
}

// with returns the record once sc is recorded: the newest scan overall sets
// last_scan and the PR's name and link; the newest of each type sets that
// type's count. It reports whether anything changed.
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
			r.secScan, r.secAt, r.SecretCount = sc.ID, at, sc.SecretCount
			changed = true
		}
	case scangate.ScanVulnerability:
		if newer(at, sc.ID, r.vulnAt, r.vulnScan) {
			r.vulnScan, r.vulnAt, r.VulnerabilityCount = sc.ID, at, sc.VulnerabilityCount
			changed = true
		}
	}
	return r, changed
}

// prRecord reads a PR record by its identity with a consistent read.
func (s *Store) prRecord(ctx context.Context, vcID, repoID, number int64) (prRecord, bool, error) {
	it, err := s.getItem(ctx, "get PR", prKey(vcID, repoID, number))
	if err != nil || it == nil {
		return prRecord{}, false, err
	}
	return prFrom(it), true, nil
}

// Scan reads a scan and its PR record: two round trips.
func (s *Store) Scan(ctx context.Context, id int64) (scangate.Scan, scangate.PR, error) {
	it, err := s.getItem(ctx, "get scan", scanKey(id))
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	if it == nil {
		return scangate.Scan{}, scangate.PR{}, scangate.Errorf(scangate.KindNotFound, "no scan has the id %d", id)
	}
	sc := scanFrom(it)
	pr, found, err := s.prRecord(ctx, sc.VcID, sc.RepoID, sc.PRNumber)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	if !found {
		return scangate.Scan{}, scangate.PR{}, fmt.Errorf("scan %d: its PR record (%d, %d, %d) is missing", id, sc.VcID, sc.RepoID, sc.PRNumber)
	}
	return sc, pr.PR, nil
}
