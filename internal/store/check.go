package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// Report is what Check found.
type Report struct {
	Scans, Findings, PRs int
	// Unrecorded counts the findings of scans never committed (those of a
	// recording under way, or of one that failed before its commit and
	// could not delete them) and the ABSENT items a scan keeps of a
	// baseline it is no longer classified against (written by a
	// re-classification that lost its switch, or left by one that switched).
	// No scan counts them and no reader sees them: they are not drift
	// (docs/DATA.md).
	Unrecorded int
	Drift      []string
	// Running lists the durable work still running, and Pending what it
	// is to correct, so that it is not drift (yet): the gates and block
	// statuses that the current policy decides otherwise than stored while
	// any work runs, and the judgements of findings by a group whose
	// re-evaluation runs.
	Running, Pending []string
}

// tableImage is every item Check looks at, by kind.
type tableImage struct {
	groups      map[groupKey]group
	scans       map[int64]item
	findings    []item
	prs         map[string]item
	branches    []item
	commits     map[string]int64          // COMMIT markers: the analysis of a branch's commit, by sort key
	absent      map[int64]map[int64]int64 // ABSENT items, by scan, then by baseline
	policyItems []item
	audited     map[int64]bool // scans named by a scan.record entry
	firstRec    string         // the id of the oldest scan.record entry
	running     []work.Item
	reevaluated map[groupKey]bool // groups a running re-evaluation judges
	events      []item            // the outbox's events
}

// Check reads the whole table and checks the invariants of docs/DATA.md:
// each finding's judgement against the allowlist rules of each of its
// groups; each scan's counts, per severity too, against a recount of its
// findings; each PR's newest scan of each (scan type, category), its
// last scan and its counts (the sums over those scans); the block status
// of those scans and the PR's gate against what the current policy
// decides (once no work runs); a scan.record audit entry for every scan,
// naming a scan that exists; and the outbox's events of scans and gates
// against them (checkEvents). It changes nothing and lists every
// disagreement.
func (s *Store) Check(ctx context.Context) (Report, error) {
	img, err := s.image(ctx)
	if err != nil {
		return Report{}, err
	}
	r := Report{Scans: len(img.scans), PRs: len(img.prs)}
	img.reevaluated = map[groupKey]bool{}
	for _, w := range img.running {
		r.Running = append(r.Running, fmt.Sprintf("work %d (%s) since %s: %d steps", w.ID, w.Kind, scangate.At(w.CreatedAt), w.Steps))
		if w.Kind == KindAllowlist || w.Kind == KindExpiry {
			if p, _, err := readReeval(w); err == nil {
				for _, g := range p.Groups {
					img.reevaluated[g.group()] = true
				}
			}
		}
	}
	unsuppressed := img.checkFindings(&r)
	want := img.checkScans(&r, unsuppressed)
	pol, err := img.policies()
	if err != nil {
		return r, err
	}
	img.checkPRs(&r, want, pol)
	img.checkBranches(&r)
	img.checkClasses(&r)
	img.checkBaselines(&r)
	img.checkAudit(&r)
	img.checkEvents(&r, time.Now())
	sort.Strings(r.Drift)
	sort.Strings(r.Pending)
	return r, nil
}

// image reads the table with a consistent Scan.
func (s *Store) image(ctx context.Context) (tableImage, error) {
	img := tableImage{groups: map[groupKey]group{}, scans: map[int64]item{}, prs: map[string]item{}, audited: map[int64]bool{},
		absent: map[int64]map[int64]int64{}, commits: map[string]int64{}}
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
	case strings.HasPrefix(sk, KeyFinding):
		img.findings = append(img.findings, it)
	case strings.HasPrefix(sk, "ABSENT#"):
		id := parseScanPK(pk)
		if img.absent[id] == nil {
			img.absent[id] = map[int64]int64{}
		}
		img.absent[id][getN(it, aBaseline)]++
	case sk == "PR":
		img.prs[pk] = it
	case strings.HasPrefix(pk, KeyBranch) && strings.HasPrefix(sk, branchSKPrefix):
		img.branches = append(img.branches, it)
	case strings.HasPrefix(pk, KeyBranch) && strings.HasPrefix(sk, "COMMIT#"):
		img.commits[pk+"/"+sk] = getN(it, aScanID)
	case pk == policyPK:
		img.policyItems = append(img.policyItems, it)
	case pk == auditPK && getS(it, aAction) == scangate.AuditScanRecord:
		id, _ := strconv.ParseInt(getS(it, aTargetID), 10, 64)
		img.audited[id] = true
		if img.firstRec == "" || sk < img.firstRec {
			img.firstRec = sk
		}
	case sk == "WORK" && getS(it, aStatus) == work.Running:
		img.running = append(img.running, workFrom(it))
	case sk == "EVENT" && strings.HasPrefix(pk, EventPrefix):
		img.events = append(img.events, it)
	}
}

// policies reads the policy items of the image.
func (img tableImage) policies() (policies, error) {
	p := policies{global: scangate.DefaultPolicy(), repos: map[int64]*scangate.PolicyOverride{}}
	for _, it := range img.policyItems {
		sk := getS(it, aSK)
		if sk == "GLOBAL" {
			p.pv = getN(it, aPolicyVer)
			if err := json.Unmarshal([]byte(getS(it, aPolicy)), &p.global); err != nil {
				return p, fmt.Errorf("the global gate policy: %w", err)
			}
			continue
		}
		repo, _ := strconv.ParseInt(strings.TrimPrefix(sk, "REPO#"), 10, 64)
		var o scangate.PolicyOverride
		if err := json.Unmarshal([]byte(getS(it, aPolicy)), &o); err != nil {
			return p, fmt.Errorf("the gate policy of repository %d: %w", repo, err)
		}
		p.repos[repo] = &o
	}
	return p, nil
}

// checkFindings compares each finding's judgement with its groups' rules
// (a difference is pending while a re-evaluation of the group runs) and
// its suppression with its judgement, and returns the unsuppressed
// findings of each scan, per severity, as judged: all of them, and the
// new ones.
func (img tableImage) checkFindings(r *Report) map[int64][2]scangate.SevCounts {
	unsuppressed := map[int64][2]scangate.SevCounts{}
	for _, it := range img.findings {
		row := rowFrom(it)
		if _, ok := img.scans[row.scanID]; !ok {
			r.Unrecorded++ // a recording under way, or one that failed before its commit
			continue
		}
		r.Findings++
		for j, g := range row.groups {
			want := img.groups[g].covering(row.ref)
			if slices.Equal(row.by[j], want) {
				continue
			}
			line := fmt.Sprintf("scan %d %s: covered by %v in %s, its allowlists say %v", row.scanID, getS(it, aSK), row.by[j], g.pk(), want)
			if img.reevaluated[g] {
				r.Pending = append(r.Pending, line)
			} else {
				r.Drift = append(r.Drift, line)
			}
		}
		if sup := row.sup(); getBool(it, aSup, false) != sup {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d %s: suppressed is %v, its judgement says %v", row.scanID, getS(it, aSK), !sup, sup))
		}
		if !row.sup() {
			c := unsuppressed[row.scanID]
			c[0].Add(row.sev, 1)
			if !row.unch {
				c[1].Add(row.sev, 1)
			}
			unsuppressed[row.scanID] = c
		}
	}
	return unsuppressed
}

// checkScans compares each scan's counts with its findings and returns
// the scans as they should be (their block status as stored).
func (img tableImage) checkScans(r *Report, unsuppressed map[int64][2]scangate.SevCounts) map[int64]scangate.Scan {
	want := map[int64]scangate.Scan{}
	for id, it := range img.scans {
		sc := scanFrom(it)
		exp := sc
		exp.Sev, exp.NewSev = unsuppressed[id][0], unsuppressed[id][1]
		exp.SecretCount, exp.VulnerabilityCount = scangate.CategoryScan{Type: sc.Type, Sev: exp.Sev}.Counts()
		want[id] = exp
		if sc.SecretCount != exp.SecretCount || sc.VulnerabilityCount != exp.VulnerabilityCount || sc.Sev != exp.Sev {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: counts %d/%d by severity %v, its findings say %d/%d by severity %v", id,
				sc.SecretCount, sc.VulnerabilityCount, sc.Sev, exp.SecretCount, exp.VulnerabilityCount, exp.Sev))
		}
		if sc.NewSev != exp.NewSev {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: new findings by severity %v, its findings say %v", id, sc.NewSev, exp.NewSev))
		}
	}
	return want
}

// checkPRs compares each PR's newest scans, last scan, counts and gate
// with its scans and the current policy.
func (img tableImage) checkPRs(r *Report, want map[int64]scangate.Scan, pol policies) {
	type newest struct {
		at string
		id int64
	}
	last := map[string]newest{}
	base := map[string]newest{} // the newest scan that named a base
	cats := map[string]map[catKey]newest{}
	for id, sc := range want {
		if sc.BranchID != 0 { // a branch analysis: checkBranches
			continue
		}
		pk := getS(prKey(sc.VcID, sc.RepoID, sc.PRNumber), aPK)
		if n := last[pk]; newer(sc.CreatedAt.String(), id, n.at, n.id) {
			last[pk] = newest{sc.CreatedAt.String(), id}
		}
		if n := base[pk]; sc.BaseRef != "" && newer(sc.CreatedAt.String(), id, n.at, n.id) {
			base[pk] = newest{sc.CreatedAt.String(), id}
		}
		if cats[pk] == nil {
			cats[pk] = map[catKey]newest{}
		}
		if n := cats[pk][catKeyOf(sc)]; newer(sc.CreatedAt.String(), id, n.at, n.id) {
			cats[pk][catKeyOf(sc)] = newest{sc.CreatedAt.String(), id}
		}
	}
	for pk, it := range img.prs {
		pr := prFrom(it)
		drift := func(format string, args ...any) {
			r.Drift = append(r.Drift, fmt.Sprintf("PR %d: ", pr.ID)+fmt.Sprintf(format, args...))
		}
		if pr.LastScan.String() != last[pk].at {
			drift("last scan %s, its scans say %s", pr.LastScan, last[pk].at)
		}
		if b := want[base[pk].id]; pr.BaseRef != b.BaseRef || pr.BaseSHA != b.BaseSHA {
			drift("base %q at %q, its newest scan that named one says %q at %q", pr.BaseRef, pr.BaseSHA, b.BaseRef, b.BaseSHA)
		}
		var exp []scangate.CategoryScan
		for k, n := range cats[pk] {
			sc := want[n.id]
			exp = append(exp, scangate.CategoryScan{Type: sc.Type, Category: k.category, ScanID: sc.ID, CreatedAt: sc.CreatedAt, Status: sc.Status, Sev: sc.Sev,
				NewSev: sc.NewSev, Class: sc.Class})
			c, ok := pr.cats[k]
			switch {
			case !ok || c.ScanID != n.id:
				drift("its newest %s scan is %d, its scans say %d", k.attr(), c.ScanID, n.id)
			case c.Class != sc.Class:
				drift("its newest %s scan %d reads classification %+v; the scan says %+v", k.attr(), n.id, c.Class, sc.Class)
			case c.Sev != sc.Sev || c.NewSev != sc.NewSev || !pr.legacy && (c.Status != sc.Status || c.cver != getN(img.scans[n.id], aCountVer) || c.block != sc.BlockStatus):
				drift("its newest %s scan %d reads %v %s (count version %d, block %v); the scan says %v %s (%d, %v)", k.attr(), n.id,
					c.Sev, c.Status, c.cver, c.block, sc.Sev, sc.Status, getN(img.scans[n.id], aCountVer), sc.BlockStatus)
			}
		}
		if len(pr.cats) != len(cats[pk]) {
			drift("%d newest scans, its scans say %d", len(pr.cats), len(cats[pk]))
		}
		secrets, vulns := int64(0), int64(0)
		for _, c := range exp {
			s, v := c.Counts()
			secrets, vulns = secrets+s, vulns+v
		}
		if getN(it, aSecretCount) != secrets || getN(it, aVulnCount) != vulns {
			drift("counts %d/%d, its newest scans say %d/%d", getN(it, aSecretCount), getN(it, aVulnCount), secrets, vulns)
		}
		img.checkGate(r, pr, it, exp, want, pol.effective(pr.RepoID))
	}
}

// checkBranches compares each branch record's newest scans, its
// baselines (newest completed scans) and last scan with its branch
// analyses, and checks that every branch analysis names a branch that
// exists and that no pull request's record counts it.
func (img tableImage) checkBranches(r *Report) {
	last := map[int64]scanAt{}
	cats, bases := map[int64]map[catKey]scanAt{}, map[int64]map[catKey]scanAt{}
	for id, it := range img.scans {
		sc := scanFrom(it)
		if sc.BranchID == 0 {
			continue
		}
		if sc.PRID != 0 || sc.PRNumber != 0 {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: a branch analysis of branch %d names pull request %d", id, sc.BranchID, sc.PRID))
		}
		n := scanAt{sc.CreatedAt.String(), id, sc.CommitSHA}
		if l := last[sc.BranchID]; newer(n.at, id, l.at, l.id) {
			last[sc.BranchID] = n
		}
		keepNewer(cats, sc.BranchID, catKeyOf(sc), n)
		if completed(sc.Status) {
			keepNewer(bases, sc.BranchID, catKeyOf(sc), n)
		}
	}
	seen := map[int64]bool{}
	for _, it := range img.branches {
		b := branchFrom(it)
		seen[b.id] = true
		drift := func(format string, args ...any) {
			r.Drift = append(r.Drift, fmt.Sprintf("branch %d (%s): ", b.id, b.name)+fmt.Sprintf(format, args...))
		}
		if b.lastScanID != last[b.id].id {
			drift("last scan %d, its analyses say %d", b.lastScanID, last[b.id].id)
		}
		compareNewest(drift, "newest scan", b.cats, cats[b.id])
		compareNewest(drift, "baseline (newest completed scan)", b.bases, bases[b.id])
	}
	for id := range cats {
		if !seen[id] {
			r.Drift = append(r.Drift, fmt.Sprintf("branch %d: its analyses exist, its record does not", id))
		}
	}
}

// scanAt is a branch analysis's place (created_at, id) and commit.
type scanAt struct {
	at  string
	id  int64
	sha string
}

// keepNewer makes n branch's entry of k in m when it is newer.
func keepNewer(m map[int64]map[catKey]scanAt, branch int64, k catKey, n scanAt) {
	if m[branch] == nil {
		m[branch] = map[catKey]scanAt{}
	}
	if o := m[branch][k]; newer(n.at, n.id, o.at, o.id) {
		m[branch][k] = n
	}
}

// compareNewest compares a branch record's scans of each pair (its
// newest, or its baselines) with what its analyses say.
func compareNewest(drift func(string, ...any), what string, got map[catKey]branchCat, want map[catKey]scanAt) {
	for k, n := range want {
		if c := got[k]; c.scanID != n.id || c.sha != n.sha {
			drift("its %s %s is %d (commit %q), its analyses say %d (%q)", k.attr(), what, c.scanID, c.sha, n.id, n.sha)
		}
	}
	if len(got) != len(want) {
		drift("%d pairs with a %s, its analyses say %d", len(got), what, len(want))
	}
}

// checkClasses recounts the classification of every pull request's
// scan against its baseline: each finding's baseline state (new unless
// its (rule, fingerprint) is among the baseline's), the scan's new,
// unchanged and absent counts, and its ABSENT items (one for each of the
// baseline's findings whose identity the scan lacks). A scan that names
// a baseline that no longer exists is drift.
func (img tableImage) checkClasses(r *Report) {
	x := img.classIndex()
	for id, it := range img.scans {
		c := scanFrom(it).Class
		if !c.Classified {
			continue
		}
		drift := func(format string, args ...any) {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: ", id)+fmt.Sprintf(format, args...))
		}
		var base map[identity]bool
		var absent int64
		if c.BaselineScanID != 0 {
			if _, ok := img.scans[c.BaselineScanID]; !ok {
				drift("its baseline %d does not exist", c.BaselineScanID)
				continue
			}
			base = x.identities(c.BaselineScanID)
			absent = x.absent(id, c.BaselineScanID)
		}
		newN, unch := x.states(id, base, drift)
		if c.New != newN || c.Unchanged != unch || c.Absent != absent || img.absent[id][c.BaselineScanID] != absent {
			drift("classified %d new, %d unchanged, %d absent (%d listed); its findings and baseline say %d, %d, %d",
				c.New, c.Unchanged, c.Absent, img.absent[id][c.BaselineScanID], newN, unch, absent)
		}
		for bl, n := range img.absent[id] {
			if bl != c.BaselineScanID { // written for a baseline it did not switch to, or no longer has: unread
				r.Unrecorded += int(n)
			}
		}
	}
}

// classIndex holds the findings of each scan of the image and, once
// asked, the identities (rule, fingerprint) of a scan's findings.
type classIndex struct {
	byScan map[int64][]item
	ids    map[int64]map[identity]bool
}

func (img tableImage) classIndex() classIndex {
	x := classIndex{byScan: map[int64][]item{}, ids: map[int64]map[identity]bool{}}
	for _, it := range img.findings {
		id := parseScanPK(getS(it, aPK))
		if _, ok := img.scans[id]; ok {
			x.byScan[id] = append(x.byScan[id], it)
		}
	}
	return x
}

func (x classIndex) identities(scan int64) map[identity]bool {
	if m, ok := x.ids[scan]; ok {
		return m
	}
	m := map[identity]bool{}
	for _, it := range x.byScan[scan] {
		if fp := getS(it, aFP); fp != "" {
			m[identityOf(getS(it, aRule), fp)] = true
		}
	}
	x.ids[scan] = m
	return m
}

// states counts the scan's findings new and unchanged against the
// baseline's identities base (nil: none), and reports each finding whose
// stored state says otherwise.
func (x classIndex) states(scan int64, base map[identity]bool, drift func(string, ...any)) (newN, unch int64) {
	for _, f := range x.byScan[scan] {
		want := scangate.BaselineNew
		if fp := getS(f, aFP); fp != "" && base[identityOf(getS(f, aRule), fp)] {
			want = scangate.BaselineUnchanged
		}
		if got := getS(f, aBaselineState); got != want {
			drift("%s is %q, its baseline says %q", getS(f, aSK), got, want)
		}
		if want == scangate.BaselineNew {
			newN++
		} else {
			unch++
		}
	}
	return newN, unch
}

// absent counts the baseline's findings whose identity the scan lacks.
func (x classIndex) absent(scan, baseline int64) int64 {
	mine := x.identities(scan)
	var n int64
	for _, f := range x.byScan[baseline] {
		if fp := getS(f, aFP); fp == "" || !mine[identityOf(getS(f, aRule), fp)] {
			n++
		}
	}
	return n
}

// checkGate compares a PR's stored gate, and the block status of its
// newest scans, with what the policy p decides from exp: a disagreement
// is drift when no work runs, and pending while some does.
func (img tableImage) checkGate(r *Report, pr prRecord, it item, exp []scangate.CategoryScan, want map[int64]scangate.Scan, p scangate.Policy) {
	var wrong []string
	g := scangate.Decide(p, exp, pr.gate.EvaluatedAt)
	// A record of before categories has no stored gate: its listed
	// blocked flag is its decision.
	if !pr.judged && getBool(it, aBlocked, true) != g.Blocked || pr.judged && (!g.Same(pr.gate) || getBool(it, aBlocked, true) != g.Blocked) {
		a, _ := json.Marshal(pr.gate)
		b, _ := json.Marshal(g)
		wrong = append(wrong, fmt.Sprintf("PR %d: gate %s (listed blocked %v), the policy decides %s", pr.ID, a, getBool(it, aBlocked, true), b))
	}
	for _, c := range exp {
		if b := p.ScanBlocks(c.Type, c.Status, c.Sev, c.NewSev); want[c.ScanID].BlockStatus != b {
			wrong = append(wrong, fmt.Sprintf("scan %d (newest %s#%s of PR %d): block status %v, the policy decides %v",
				c.ScanID, c.Type, c.Category, pr.ID, want[c.ScanID].BlockStatus, b))
		}
	}
	if len(img.running) > 0 {
		r.Pending = append(r.Pending, wrong...)
	} else {
		r.Drift = append(r.Drift, wrong...)
	}
}

// checkAudit checks that every scan recorded since scan.record entries
// exist has one, and that every entry names a scan that exists. Scans
// recorded before (older than the oldest entry) have none; entries that
// expired with the table's TTL take their scans with them into that past.
func (img tableImage) checkAudit(r *Report) {
	for id := range img.audited {
		if _, ok := img.scans[id]; !ok {
			r.Drift = append(r.Drift, fmt.Sprintf("audit entry scan.record of scan %d: no such scan", id))
		}
	}
	if img.firstRec == "" {
		return
	}
	for id, it := range img.scans {
		if !img.audited[id] && ulidString(getTime(it, aCreatedAt).Time, [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) > img.firstRec {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: no scan.record audit entry", id))
		}
	}
}

// checkEvents checks the outbox's scan.recorded and pr.gate_changed
// events against the scans and PRs, as far as the table can tell. Events
// last DefaultEventRetention (the TTL deletes them some time after, in no
// order): only those whose TTL has not passed at now are counted, and a
// change is known to have its event kept when it happened after the
// outbox's horizon, the later of now less the retention and the oldest
// event kept (a change before the first event was written has none).
//   - Every scan.recorded names a scan that exists, and one scan has at most
//     one; every scan recorded after the horizon has one.
//   - Every pr.gate_changed names a PR that exists, with a sequence at most
//     its gseq and no other event of the PR with the same sequence; the
//     sequences kept of a PR are one run ending at its gseq, the newest
//     with the PR's stored decision (blocked and reasons); and a PR created
//     after the horizon has all of them: as many events as its gseq.
func (img tableImage) checkEvents(r *Report, now time.Time) {
	horizon := now.Add(-DefaultEventRetention)
	oldest := time.Time{}
	scans := map[int64]int{}
	gates := map[int64][]scangate.GateChange{}
	for _, it := range img.events {
		if getN(it, aTTL) <= now.Unix() {
			continue
		}
		at := getTime(it, aOccurredAt).Time
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
		switch getS(it, aType) {
		case scangate.EventScanRecorded:
			var v struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal([]byte(getS(it, aData)), &v)
			scans[v.ID]++
		case scangate.EventGateChanged:
			var g scangate.GateChange
			_ = json.Unmarshal([]byte(getS(it, aData)), &g)
			gates[g.PRID] = append(gates[g.PRID], g)
		}
	}
	if oldest.IsZero() {
		return // no event kept: the outbox tells nothing
	}
	if oldest.After(horizon) {
		horizon = oldest
	}
	for id, n := range scans {
		if _, ok := img.scans[id]; !ok {
			r.Drift = append(r.Drift, fmt.Sprintf("event scan.recorded of scan %d: no such scan", id))
		} else if n > 1 {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: %d scan.recorded events", id, n))
		}
	}
	for id, it := range img.scans {
		if scans[id] == 0 && !getTime(it, aCreatedAt).Before(horizon) {
			r.Drift = append(r.Drift, fmt.Sprintf("scan %d: no scan.recorded event", id))
		}
	}
	prs := map[int64]prRecord{}
	for _, it := range img.prs {
		pr := prFrom(it)
		prs[pr.ID] = pr
	}
	for id, gs := range gates {
		if _, ok := prs[id]; !ok {
			r.Drift = append(r.Drift, fmt.Sprintf("%d pr.gate_changed events of PR %d: no such PR", len(gs), id))
		}
	}
	for id, pr := range prs {
		img.checkGateEvents(r, pr, gates[id], !pr.CreatedAt.Before(horizon))
	}
}

// checkGateEvents checks the pr.gate_changed events kept of one PR; all
// says whether every one of them is kept.
func (img tableImage) checkGateEvents(r *Report, pr prRecord, gs []scangate.GateChange, all bool) {
	drift := func(format string, args ...any) {
		r.Drift = append(r.Drift, fmt.Sprintf("PR %d: ", pr.ID)+fmt.Sprintf(format, args...))
	}
	if all && int64(len(gs)) != pr.gseq {
		drift("gate sequence %d, %d pr.gate_changed events", pr.gseq, len(gs))
	}
	if len(gs) == 0 {
		return
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Sequence < gs[j].Sequence })
	for i, g := range gs {
		if i > 0 && g.Sequence != gs[i-1].Sequence+1 {
			drift("pr.gate_changed sequences %d then %d", gs[i-1].Sequence, g.Sequence)
		}
	}
	last := gs[len(gs)-1]
	switch {
	case last.Sequence != pr.gseq:
		drift("gate sequence %d, its newest pr.gate_changed has %d", pr.gseq, last.Sequence)
	case last.Blocked != pr.gate.Blocked || !scangate.SameReasons(last.Reasons, pr.gate.Reasons):
		drift("its newest pr.gate_changed (sequence %d) says blocked %v for %d reasons; its gate, blocked %v for %d",
			last.Sequence, last.Blocked, len(last.Reasons), pr.gate.Blocked, len(pr.gate.Reasons))
	}
}

// checkBaselines checks that the newest scan of each category of every
// active pull request with a base, classified against a baseline that is
// not exact, is classified against what its base says now (baselineOf):
// the base branch's completed analysis of the PR's base commit, else its
// newest completed one, else none (none for a scan that did not
// complete).
// A difference is pending while baseline work runs, drift otherwise.
func (img tableImage) checkBaselines(r *Report) {
	branches := map[string]branchRecord{}
	for _, it := range img.branches {
		b := branchFrom(it)
		branches[branchesPK(b.vcID, b.repoID)+"/"+b.name] = b
	}
	pending := false
	for _, w := range img.running {
		pending = pending || w.Kind == KindBaseline
	}
	for _, it := range img.prs {
		pr := prFrom(it)
		if pr.BaseRef == "" {
			continue
		}
		b := branches[branchesPK(pr.VcID, pr.RepoID)+"/"+pr.BaseRef]
		for k, c := range pr.cats {
			if !c.Class.Classified || c.Class.Match == scangate.MatchExact {
				continue
			}
			var exactID int64
			if pr.BaseSHA != "" {
				exactID = img.commits[branchesPK(pr.VcID, pr.RepoID)+"/"+commitSK(b.id, k, pr.BaseSHA)]
			}
			want := target{}
			if completed(c.Status) {
				want = baselineOf(b, k, exactID, pr.BaseSHA)
			}
			if want.scanID != 0 && pr.LastScan.Before(b.bases[k].at.Add(-ActiveWindow)) {
				continue // not active when its base moved: not re-classified
			}
			if want.scanID == c.Class.BaselineScanID && want.match == c.Class.Match {
				continue
			}
			line := fmt.Sprintf("PR %d: its newest %s scan %d is classified against %d (%s); its base %q says %d (%s)", pr.ID, k.attr(),
				c.ScanID, c.Class.BaselineScanID, c.Class.Match, pr.BaseRef, want.scanID, want.match)
			if pending {
				r.Pending = append(r.Pending, line)
			} else {
				r.Drift = append(r.Drift, line)
			}
		}
	}
}
