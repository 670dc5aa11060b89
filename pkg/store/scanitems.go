package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

func scanKey(id int64) item { return key(scanPK(id), "SCAN") }

func scanItem(sc scangate.Scan) item {
	it := scanKey(sc.ID)
	it["id"] = num(sc.ID)
	it["pr_ref"] = num(sc.PRID)
	it["pr_number"] = num(sc.PRNumber)
	it["vc_id"] = num(sc.VcID)
	it["webhook_id"] = num(sc.WebhookID)
	it["repo_id"] = num(sc.RepoID)
	it["vc_type"] = str(sc.VcType)
	it["scan_type"] = str(string(sc.Type))
	it["created_at"] = str(sc.CreatedAt.String())
	it["vc_name"] = str(sc.VcName)
	it["repo_name"] = str(sc.RepoName)
	it["status"] = str(sc.Status)
	it["block_status"] = boolean(sc.BlockStatus)
	if len(sc.OtherDetails) > 0 {
		it["other_details"] = str(string(sc.OtherDetails))
	}
	if sc.StatURL != nil {
		it["stat_url"] = str(*sc.StatURL)
	}
	it["secret_count"] = num(sc.SecretCount)
	it["vulnerability_count"] = num(sc.VulnerabilityCount)
	it["cver"] = num(0)
	return it
}

// scanFrom reads a scan item. Absent attributes read as the spec's
// defaults: status pending, block_status true, counts 0, other_details {}.
func scanFrom(it item) scangate.Scan {
	sc := scangate.Scan{
		ID:                 getN(it, "id"),
		PRID:               getN(it, "pr_ref"),
		PRNumber:           getN(it, "pr_number"),
		VcID:               getN(it, "vc_id"),
		WebhookID:          getN(it, "webhook_id"),
		RepoID:             getN(it, "repo_id"),
		VcType:             getS(it, "vc_type"),
		Type:               scangate.ScanType(getS(it, "scan_type")),
		CreatedAt:          getTime(it, "created_at"),
		VcName:             getS(it, "vc_name"),
		RepoName:           getS(it, "repo_name"),
		Status:             getS(it, "status"),
		BlockStatus:        getBool(it, "block_status", true),
		OtherDetails:       json.RawMessage(getS(it, "other_details")),
		SecretCount:        getN(it, "secret_count"),
		VulnerabilityCount: getN(it, "vulnerability_count"),
	}
	if sc.Status == "" {
		sc.Status = scangate.ScanStatuses[0]
	}
	if len(sc.OtherDetails) == 0 {
		sc.OtherDetails = json.RawMessage("{}")
	}
	if v, ok := it["stat_url"].(*types.AttributeValueMemberS); ok {
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
	it["id"] = num(r.ID)
	it["pr_number"] = num(r.Number)
	it["pr_name"] = str(r.Name)
	it["pr_link"] = str(r.Link)
	it["repo_id"] = num(r.RepoID)
	it["vc_id"] = num(r.VcID)
	it["webhook_id"] = num(r.WebhookID)
	it["created_at"] = str(r.CreatedAt.String())
	it["last_scan"] = str(r.LastScan.String())
	it["last_scan_id"] = num(r.lastScanID)
	it["sec_scan"] = num(r.secScan)
	it["sec_at"] = str(r.secAt)
	it["secret_count"] = num(r.SecretCount)
	it["vuln_scan"] = num(r.vulnScan)
	it["vuln_at"] = str(r.vulnAt)
	it["vulnerability_count"] = num(r.VulnerabilityCount)
	it["ver"] = num(r.ver)
	return it
}

func prFrom(it item) prRecord {
	return prRecord{
		PR: scangate.PR{
			ID:                 getN(it, "id"),
			Number:             getN(it, "pr_number"),
			Name:               getS(it, "pr_name"),
			Link:               getS(it, "pr_link"),
			RepoID:             getN(it, "repo_id"),
			VcID:               getN(it, "vc_id"),
			WebhookID:          getN(it, "webhook_id"),
			CreatedAt:          getTime(it, "created_at"),
			LastScan:           getTime(it, "last_scan"),
			SecretCount:        getN(it, "secret_count"),
			VulnerabilityCount: getN(it, "vulnerability_count"),
		},
		lastScanID: getN(it, "last_scan_id"),
		secScan:    getN(it, "sec_scan"),
		secAt:      getS(it, "sec_at"),
		vulnScan:   getN(it, "vuln_scan"),
		vulnAt:     getS(it, "vuln_at"),
		ver:        getN(it, "ver"),
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
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: prKey(vcID, repoID, number), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return prRecord{}, false, dbErr("get PR", err)
	}
	if out.Item == nil {
		return prRecord{}, false, nil
	}
	return prFrom(out.Item), true, nil
}

// Scan reads a scan and its PR record: two round trips.
func (s *Store) Scan(ctx context.Context, id int64) (scangate.Scan, scangate.PR, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: scanKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, dbErr("get scan", err)
	}
	if out.Item == nil {
		return scangate.Scan{}, scangate.PR{}, scangate.Errorf(scangate.KindNotFound, "no scan has the id %d", id)
	}
	sc := scanFrom(out.Item)
	pr, found, err := s.prRecord(ctx, sc.VcID, sc.RepoID, sc.PRNumber)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	if !found {
		return scangate.Scan{}, scangate.PR{}, fmt.Errorf("scan %d: its PR record (%d, %d, %d) is missing", id, sc.VcID, sc.RepoID, sc.PRNumber)
	}
	return sc, pr.PR, nil
}
