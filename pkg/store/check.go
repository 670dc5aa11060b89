package store

import (
	"context"
	"fmt"
	"slices"
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

// tableImage is every item Check looks at, by kind.
type tableImage struct {
	groups   map[groupKey]group
	scans    map[int64]item
	findings []item
	prs      map[string]prRecord
	blocked  map[string]bool // the blocked attribute the PR listing filters on
}

// Check reads the whole table and recounts every scan from its findings:
// each finding's judgement against the allowlist rules of each of its
// groups, each scan's counts and block status, and each PR's last scan and
// counts. It changes nothing and lists every disagreement.
func (s *Store) Check(ctx context.Context) (Report, error) {
	img, err := s.image(ctx)
	if err != nil {
		return Report{}, err
	}
	r := Report{Scans: len(img.scans), Findings: len(img.findings), PRs: len(img.prs)}
	unsuppressed := img.checkFindings(&r)
	want := img.checkScans(&r, unsuppressed)
	img.checkPRs(&r, want)
	sort.Strings(r.Drift)
	return r, nil
}

// image reads the table with a consistent Scan.
func (s *Store) image(ctx context.Context) (tableImage, error) {
	img := tableImage{groups: map[groupKey]group{}, scans: map[int64]item{}, prs: map[string]prRecord{}, blocked: map[string]bool{}}
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return img, dbErr("scan table", err)
		}
		for _, it := range page.Items {
			img.add(it)
		}
	}
	return img, nil
}

func (img *tableImage) add(it item) {
	pk, sk := getS(it, aPK), getS(it, aSK)
	switch {
	case strings.HasPrefix(sk, "RULE#"):
		g := parseGroupPK(pk)
		if _, ok := img.groups[g]; !ok {
			img.groups[g] = group{groupKey: g, rules: map[int64]scangate.Rule{}}
		}
		img.groups[g].rules[getN(it, aID)] = ruleFrom(it).Compiled()
	case sk == "SCAN":
		img.scans[getN(it, aID)] = it
	case strings.HasPrefix(sk, "FINDING#"):
		img.findings = append(img.findings, it)
	case sk == "PR":
		img.prs[pk] = prFrom(it)
		img.blocked[pk] = getBool(it, aBlocked, true)
	}
}

// checkFindings compares each finding's judgement with its groups' rules
// and returns the unsuppressed findings of each scan.
func (img tableImage) checkFindings(r *Report) map[int64]int64 {
	unsuppressed := map[int64]int64{}
	for _, it := range img.findings {
		row := rowFrom(it)
		if _, ok := img.scans[row.scanID]; !ok {
			continue // a scan whose recording failed before its commit
		}
		want := map[int][]int64{}
		for j, g := range row.groups {
			if ids := img.groups[g].covering(row.ref); len(ids) > 0 {
				want[j] = ids
			}
		}
		if !sameJudgement(row.by, want) {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d %s: covered by %v, its allowlists say %v", row.scanID, getS(it, aSK), row.by, want))
		}
		sup := row.src || len(want) > 0
		if getBool(it, aSup, false) != sup {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d %s: suppressed is %v, its allowlists say %v", row.scanID, getS(it, aSK), !sup, sup))
		}
		if !sup {
			unsuppressed[row.scanID]++
		}
	}
	return unsuppressed
}

func sameJudgement(a, b map[int][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for j, ids := range a {
		if !slices.Equal(ids, b[j]) {
			return false
		}
	}
	return true
}

// newest is a scan's place in its PR's order.
type newest struct {
	at string
	id int64
}

// checkScans compares each scan's counts with its findings and returns
// the scans as they should be.
func (img tableImage) checkScans(r *Report, unsuppressed map[int64]int64) map[int64]scangate.Scan {
	want := map[int64]scangate.Scan{}
	for id, it := range img.scans {
		sc := scanFrom(it)
		exp := sc
		exp.SecretCount, exp.VulnerabilityCount = scangate.Counts(sc.Type, make([]bool, unsuppressed[id]))
		exp.BlockStatus = scangate.Blocks(sc.Status, exp.SecretCount, exp.VulnerabilityCount)
		want[id] = exp
		if sc.SecretCount != exp.SecretCount || sc.VulnerabilityCount != exp.VulnerabilityCount || sc.BlockStatus != exp.BlockStatus {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: counts %d/%d block %v, its findings say %d/%d block %v", id,
				sc.SecretCount, sc.VulnerabilityCount, sc.BlockStatus, exp.SecretCount, exp.VulnerabilityCount, exp.BlockStatus))
		}
	}
	return want
}

// checkPRs compares each PR's last scan and counts with its scans.
func (img tableImage) checkPRs(r *Report, want map[int64]scangate.Scan) {
	newestOf := map[string]map[string]newest{}
	for id, sc := range want {
		pk := getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), aPK)
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
	for pk, pr := range img.prs {
		n := newestOf[pk]
		sec, vul := n[string(scangate.ScanSecret)].id, n[string(scangate.ScanVulnerability)].id
		wantSec, wantVul := want[sec].SecretCount, want[vul].VulnerabilityCount
		blocked := sec != 0 && want[sec].BlockStatus || vul != 0 && want[vul].BlockStatus
		if pr.LastScan.String() != n["all"].at || pr.SecretCount != wantSec || pr.VulnerabilityCount != wantVul || pr.blocked() != blocked ||
			img.blocked[pk] != blocked {
			r.Drift = append(r.Drift, fmt.Sprintf("PR %d: last scan %s counts %d/%d blocked %v (listed %v), its scans say %s %d/%d blocked %v", pr.ID,
				pr.LastScan, pr.SecretCount, pr.VulnerabilityCount, pr.blocked(), img.blocked[pk], n["all"].at, wantSec, wantVul, blocked))
		}
	}
}
