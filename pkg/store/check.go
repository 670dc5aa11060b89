package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/scangate"
)

// Report is what Check found.
type Report struct {
	Scans, Findings, PRs int
	Drift                []string
}

// Check reads the whole table and recounts every scan from its findings:
// each finding's suppression against the allowlists of its group, each
// scan's counts and block status, and each PR's last scan and counts. It
// changes nothing and lists every disagreement.
func (s *Store) Check(ctx context.Context) (Report, error) {
	groups := map[string]group{}
	scans := map[int64]item{}
	var findings []item
	prs := map[string]prRecord{}
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Report{}, dbErr("scan table", err)
		}
		for _, it := range page.Items {
			pk, sk := getS(it, "PK"), getS(it, "SK")
			switch {
			case sk == "GROUP":
				parts := strings.SplitN(pk, "#", 3)
				groups[pk] = groupFrom(group{typ: scangate.ScanType(parts[1]), key: parts[2], rules: map[int64]scangate.Rule{}}, it)
			case sk == "SCAN":
				scans[getN(it, "id")] = it
			case strings.HasPrefix(sk, "FINDING#"):
				findings = append(findings, it)
			case sk == "PR":
				prs[pk] = prFrom(it)
			}
		}
	}
	var r Report
	r.Scans, r.Findings, r.PRs = len(scans), len(findings), len(prs)
	unsuppressed := map[int64]int64{}
	for _, it := range findings {
		row := rowFrom(it)
		if _, ok := scans[row.scanID]; !ok {
			continue // a scan whose recording failed before its commit
		}
		g := groups[groupOf(row.ref.Type, row.ref.Name).pk()]
		want := g.rules != nil && g.covers(row.ref)
		if row.sup != want {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d %s: suppressed is %v, its allowlists say %v", row.scanID, getS(it, "SK"), row.sup, want))
		}
		if !want {
			unsuppressed[row.scanID]++
		}
	}
	type newest struct {
		at string
		id int64
	}
	want := map[int64]scangate.Scan{}
	newestOf := map[string]map[string]newest{}
	for id, it := range scans {
		sc := scanFrom(it)
		exp := sc
		exp.SecretCount, exp.VulnerabilityCount = scangate.Counts(sc.Type, make([]bool, unsuppressed[id]))
		exp.BlockStatus = scangate.Blocks(sc.Status, exp.SecretCount, exp.VulnerabilityCount)
		want[id] = exp
		if sc.SecretCount != exp.SecretCount || sc.VulnerabilityCount != exp.VulnerabilityCount || sc.BlockStatus != exp.BlockStatus {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: counts %d/%d block %v, its findings say %d/%d block %v", id,
				sc.SecretCount, sc.VulnerabilityCount, sc.BlockStatus, exp.SecretCount, exp.VulnerabilityCount, exp.BlockStatus))
		}
		pk := getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), "PK")
		if newestOf[pk] == nil {
			newestOf[pk] = map[string]newest{}
		}
		for _, k := range []string{"all", string(sc.Type)} {
			n := newestOf[pk][k]
			if newer(sc.CreatedAt.String(), id, n.at, n.id) {
				newestOf[pk][k] = newest{sc.CreatedAt.String(), id}
			}
		}
	}
	for pk, pr := range prs {
		n := newestOf[pk]
		wantSec, wantVul := want[n[string(scangate.ScanSecret)].id].SecretCount, want[n[string(scangate.ScanVulnerability)].id].VulnerabilityCount
		if pr.LastScan.String() != n["all"].at || pr.SecretCount != wantSec || pr.VulnerabilityCount != wantVul {
			r.Drift = append(r.Drift, fmt.Sprintf("PR %d: last scan %s counts %d/%d, its scans say %s %d/%d", pr.ID,
				pr.LastScan, pr.SecretCount, pr.VulnerabilityCount, n["all"].at, wantSec, wantVul))
		}
	}
	sort.Strings(r.Drift)
	return r, nil
}
