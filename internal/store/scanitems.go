package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
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
	it[aSev] = sevAttr(sc.Sev)
	it[aCategory] = str(categoryOf(sc))
	if sc.CommitSHA != "" {
		it[aCommitSHA] = str(sc.CommitSHA)
	}
	if sc.Ref != "" {
		it[aRef] = str(sc.Ref)
	}
	it[aCountVer] = num(0)
	// Listed with its PR's scans (GSI3), newest first; a branch
	// analysis with its branch's.
	it[aGSI3PK], it[aGSI3SK] = str(prScansPK(sc.PRID)), str(prScansSK(sc))
	if sc.BaseRef != "" {
		it[aBaseRef] = str(sc.BaseRef)
	}
	if sc.BaseSHA != "" {
		it[aBaseSHA] = str(sc.BaseSHA)
	}
	if c := sc.Class; c.Classified {
		it[aClassified], it[aNewCount], it[aUnchCount], it[aAbsentCount] = boolean(true), num(c.New), num(c.Unchanged), num(c.Absent)
		if c.BaselineScanID != 0 {
			it[aBaseline], it[aBaselineMatch] = num(c.BaselineScanID), str(c.Match)
			if c.BaselineSHA != "" {
				it[aBaselineSHA] = str(c.BaselineSHA)
			}
		}
	}
	if sc.BranchID != 0 {
		it[aBranchID], it[aBranch] = num(sc.BranchID), str(sc.Branch)
		it[aGSI3PK] = str(branchScansPK(sc.BranchID))
	}
	return it
}

// classFrom reads a classification (of a scan item, or of a PR record's
// cats entry).
func classFrom(it item) scangate.Classification {
	return scangate.Classification{Classified: getBool(it, aClassified, false), BaselineScanID: getN(it, aBaseline),
		BaselineSHA: getS(it, aBaselineSHA), Match: getS(it, aBaselineMatch),
		New: getN(it, aNewCount), Unchanged: getN(it, aUnchCount), Absent: getN(it, aAbsentCount)}
}

// scanFrom reads a scan item. Absent attributes read as the spec's
// defaults: status pending, block_status true, counts 0, other_details {};
// a scan of before categories is of category default, and its counts are
// of findings of severity high (as findings of before severities read).
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
		Category:           getS(it, aCategory),
		CommitSHA:          getS(it, aCommitSHA),
		Ref:                getS(it, aRef),
		Sev:                sevFrom(it, aSev),
		BranchID:           getN(it, aBranchID),
		Branch:             getS(it, aBranch),
		BaseRef:            getS(it, aBaseRef),
		BaseSHA:            getS(it, aBaseSHA),
		Class:              classFrom(it),
	}
	if _, ok := it[aSev]; !ok {
		sc.Sev = scangate.SevCounts{0, sc.SecretCount + sc.VulnerabilityCount}
	}
	if sc.Category == "" {
		sc.Category = scangate.DefaultCategory
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
	if sc.BranchID != 0 { // a branch analysis: no pull request
		return sc, scangate.PR{}, nil
	}
	pr, found, err := s.prRecord(ctx, sc.VcID, sc.RepoID, sc.PRNumber)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	if !found {
		return scangate.Scan{}, scangate.PR{}, fmt.Errorf("scan %d: its PR record (%d, %d, %d) is missing", id, sc.VcID, sc.RepoID, sc.PRNumber)
	}
	return sc, pr.PR, nil
}
