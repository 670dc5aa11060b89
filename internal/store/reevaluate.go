package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// The re-evaluation of an allowlist's findings after a change (kind
// allowlist: a create or a modify) or an expiry (kind expiry) is durable
// work (internal/queue/work), written in the change's transaction with the rules
// before and after and the version the change gave each group it moved
// (reevalParams).
//
// Planning cuts each group's findings, as its GSI1 partition lists them
// (sort key <scan id>#<finding>), into ranges of about StepFindings
// findings at scan boundaries, so that one scan's counts are written by
// one step: it counts the partition in pages of that many keys
// (Select COUNT, which carries no item back) and cuts after the scan of
// each page's last key, 8 segments of the scan ids at once. The cuts are
// kept with the item (its layout); the first range is open below, the
// last above (scans recorded after the plan). A change of at most
// SyncFindings findings runs in the request; a larger one fans out, one
// queue message a range (docs/DECISIONS.md).
//
// A step reads its range page by page (at most pageRows keys a page, and
// the group's RECENT items within the range, for the index's lag), counts
// the findings the old and the new rule judge differently, and judges
// them by a snapshot of the group at the version its change made; a
// step that finds the group moved past it (a newer change, whose own work
// judges the whole group) writes nothing and only counts: the item is
// superseded. Its result: findings, secrets_updated,
// vulnerabilities_updated.

// Kinds of the work that re-evaluates an allowlist's findings.
const (
	KindAllowlist = "allowlist"
	KindExpiry    = "expiry"
)

// Defaults of the re-evaluation's sizes (docs/DECISIONS.md says how they
// were derived): a change of up to DefaultSyncFindings findings runs in
// its request; a step covers about DefaultStepFindings.
const (
	DefaultSyncFindings = 10_000
	DefaultStepFindings = 2_000
)

// pageRows is the most index keys a step reads, and findings it holds, at
// once: its memory does not grow with its range or its group.
const pageRows = 1000

// planParallel is how many segments of the scan ids a plan counts at once.
const planParallel = 8

// maxCuts bounds the ranges of one group (the layout stays far under
// DynamoDB's 400 KB); past it, neighbouring ranges are merged.
const maxCuts = 20_000

// reevalParams are a re-evaluation's parameters.
type reevalParams struct {
	Allowlist int64          `json:"allowlist"`
	Old       *scangate.Rule `json:"old,omitempty"` // nil: created
	New       scangate.Rule  `json:"new"`
	// Groups are the groups to re-evaluate, the new rule's first, each
	// with the version the change left it at.
	Groups []groupAt `json:"groups"`
}

// groupAt is a group at a version.
type groupAt struct {
	Type scangate.ScanType `json:"type"`
	Key  string            `json:"key"`
	GV   int64             `json:"gv"`
}

func atVersion(g groupKey, gv int64) groupAt { return groupAt{Type: g.typ, Key: g.key, GV: gv} }

func (a groupAt) group() groupKey { return groupKey{typ: a.Type, key: a.Key} }

// reevalLayout is a re-evaluation's plan: for each group, the scan ids at
// which its ranges after the first begin.
type reevalLayout struct {
	Cuts [][]int64 `json:"cuts"`
}

// reevalWork runs re-evaluations (work.Kind).
type reevalWork struct {
	s     *Store
	now   func() time.Time
	cause string
}

func readReeval(it work.Item) (reevalParams, reevalLayout, error) {
	var p reevalParams
	var l reevalLayout
	if err := json.Unmarshal(it.Params, &p); err != nil {
		return p, l, fmt.Errorf("work %d: parameters: %w", it.ID, err)
	}
	if len(it.Layout) > 0 {
		if err := json.Unmarshal(it.Layout, &l); err != nil {
			return p, l, fmt.Errorf("work %d: layout: %w", it.ID, err)
		}
	}
	return p, l, nil
}

// Plan cuts each group's findings into ranges.
func (w reevalWork) Plan(ctx context.Context, it work.Item) (work.Plan, error) {
	p, _, err := readReeval(it)
	if err != nil {
		return work.Plan{}, err
	}
	c, err := w.s.getItem(ctx, "read scan counter", key("COUNTER#scan", "COUNTER"))
	if err != nil {
		return work.Plan{}, err
	}
	var l reevalLayout
	steps, total := 0, int64(0)
	for _, ga := range p.Groups {
		cuts, n, err := w.s.cutGroup(ctx, ga.group(), getN(c, aN))
		if err != nil {
			return work.Plan{}, err
		}
		l.Cuts = append(l.Cuts, cuts)
		steps, total = steps+len(cuts)+1, total+n
	}
	b, err := json.Marshal(l)
	if err != nil {
		return work.Plan{}, err
	}
	return work.Plan{Steps: steps, Planned: work.Result{"findings": total}, Layout: b, FanOut: total > int64(w.s.syncFindings)}, nil
}

// cutGroup counts a group's index entries of scans up to maxScan and cuts
// them into ranges of about stepFindings, at scan boundaries: the scan
// ids at which each range after the first begins, and the count.
func (s *Store) cutGroup(ctx context.Context, g groupKey, maxScan int64) ([]int64, int64, error) {
	segs := int64(planParallel)
	if maxScan < segs*int64(s.stepFindings) {
		segs = 1
	}
	width := maxScan/segs + 1
	type result struct {
		cuts []int64
		n    int64
	}
	out := make([]result, segs)
	idx := make([]int64, segs)
	for i := range idx {
		idx[i] = int64(i)
	}
	err := parallel(ctx, planParallel, idx, func(ctx context.Context, i int64) error {
		lo, hi := i*width, (i+1)*width-1
		in := &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String(GSI1), Select: types.SelectCount,
			Limit:                     aws.Int32(int32(s.stepFindings)),
			KeyConditionExpression:    aws.String(ref(aGSI1PK) + " = :pk AND " + ref(aGSI1SK) + " BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: item{":pk": str(g.findings()), ":lo": str(scanBound(lo)), ":hi": str(scanBound(hi) + "#~")}}
		in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression)
		for {
			page, err := s.db.Query(ctx, in)
			if err != nil {
				return dbErr("count findings", err)
			}
			out[i].n += int64(page.Count)
			if len(page.LastEvaluatedKey) == 0 {
				return nil
			}
			scan, _, _ := strings.Cut(getS(page.LastEvaluatedKey, aGSI1SK), "#")
			id, _ := strconv.ParseInt(scan, 10, 64)
			out[i].cuts = append(out[i].cuts, id+1)
			in.ExclusiveStartKey = page.LastEvaluatedKey
		}
	})
	if err != nil {
		return nil, 0, err
	}
	var cuts []int64
	var n int64
	for _, r := range out {
		cuts, n = append(cuts, r.cuts...), n+r.n
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for len(cuts) > maxCuts {
		half := cuts[:0]
		for i := 1; i < len(cuts); i += 2 {
			half = append(half, cuts[i])
		}
		cuts = half
	}
	return cuts, n, nil
}

// scanBound is the start of a scan's keys in a group's GSI1 partition.
func scanBound(scan int64) string { return fmt.Sprintf("%019d", scan) }

// Step re-evaluates one range of one group.
func (w reevalWork) Step(ctx context.Context, it work.Item, n int) (work.Result, error) {
	p, l, err := readReeval(it)
	if err != nil {
		return nil, err
	}
	for i, cuts := range l.Cuts {
		if n > len(cuts) {
			n -= len(cuts) + 1
			continue
		}
		r := scanRange{lo: 0, hi: -1}
		if n > 0 {
			r.lo = cuts[n-1]
		}
		if n < len(cuts) {
			r.hi = cuts[n]
		}
		return w.s.reevaluateRange(ctx, p, i, r, w.cause, w.now())
	}
	return nil, fmt.Errorf("work %d: no step %d in its layout", it.ID, n)
}

// scanRange is the scan ids from lo to before hi (-1: no end).
type scanRange struct{ lo, hi int64 }

func (r scanRange) has(scan int64) bool { return scan >= r.lo && (r.hi < 0 || scan < r.hi) }

// keyCondition is the range's condition on a group's GSI1 sort keys.
func (r scanRange) keyCondition(vals item) string {
	switch {
	case r.hi < 0:
		vals[":lo"] = str(scanBound(r.lo))
		return ref(aGSI1SK) + " >= :lo"
	default:
		vals[":lo"], vals[":hi"] = str(scanBound(r.lo)), str(scanBound(r.hi))
		return ref(aGSI1SK) + " BETWEEN :lo AND :hi" // :hi is the next scan's bare id: before its first key
	}
}

// rangeTally counts what a step's findings are.
type rangeTally struct {
	old, new scangate.Rule
	also     *groupKey // a finding of this group too is counted in its steps
	upd      scangate.Updated
	findings int64
}

func (t *rangeTally) count(rows []findingRow) {
	for _, r := range rows {
		if t.also != nil && r.groupIndex(*t.also) >= 0 {
			continue
		}
		t.findings++
		t.upd.Count(t.old, t.new, r.ref)
	}
}

// reevaluateRange re-evaluates the findings of group p.Groups[gi] in the
// scans of r: it counts them and, unless the group moved past the version
// its change made, judges them by its rules at that version, page by page.
func (s *Store) reevaluateRange(ctx context.Context, p reevalParams, gi int, r scanRange, cause string, now time.Time) (work.Result, error) {
	ga := p.Groups[gi]
	g := ga.group()
	tally := rangeTally{new: p.New.Compiled()}
	if p.Old != nil {
		tally.old = p.Old.Compiled()
	}
	if gi > 0 {
		first := p.Groups[0].group()
		tally.also = &first
	}
	snap, err := s.snapshot(ctx, g)
	if err != nil {
		return nil, err
	}
	write := snap.gv <= ga.GV // a newer version's work judges the group
	process := func(rows []findingRow) error {
		tally.count(rows)
		if !write || len(rows) == 0 {
			return nil
		}
		moved, err := s.settleRows(ctx, g, &snap, rows, cause, now)
		write = !moved
		return err
	}
	recent, err := s.recentKeysIn(ctx, g, r, now)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{} // the recent findings' keys: a few dozen bytes each
	for start := 0; start < len(recent); start += pageRows {
		chunk := recent[start:min(start+pageRows, len(recent))]
		for _, k := range chunk {
			seen[keyString(k)] = true
		}
		rows, err := s.findingRows(ctx, chunk)
		if err == nil {
			err = process(rows)
		}
		if err != nil {
			return nil, err
		}
	}
	// The next page is read while this one is written: at most three
	// pages held at once.
	pages := make(chan rowPage, 1)
	reading, stop := context.WithCancel(ctx)
	defer stop()
	go s.readPages(reading, g, r, seen, pages)
	for p := range pages {
		if p.err != nil {
			return nil, p.err
		}
		if err := process(p.rows); err != nil {
			return nil, err
		}
	}
	return work.Result{"findings": tally.findings, "secrets_updated": tally.upd.Secrets,
		"vulnerabilities_updated": tally.upd.Vulnerabilities}, nil
}

// rowPage is one page of a range's findings, or the error that ended
// the reading.
type rowPage struct {
	rows []findingRow
	err  error
}

// readPages sends the findings of g in r page by page (at most pageRows
// index keys a page), each once (an alias entry in the same group, and a
// finding in seen, are skipped), and closes pages at the end, after an
// error, or when ctx ends.
func (s *Store) readPages(ctx context.Context, g groupKey, r scanRange, seen map[string]bool, pages chan<- rowPage) {
	defer close(pages)
	vals := item{":pk": str(g.findings())}
	in := &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String(GSI1), Limit: aws.Int32(pageRows),
		KeyConditionExpression: aws.String(ref(aGSI1PK) + " = :pk AND " + r.keyCondition(vals)), ExpressionAttributeValues: vals}
	in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression)
	last := ""
	for q := dynamodb.NewQueryPaginator(s.db, in); q.HasMorePages(); {
		var p rowPage
		page, err := q.NextPage(ctx)
		if err != nil {
			p.err = dbErr("list findings", err)
		} else {
			var keys []item
			for _, e := range page.Items {
				k := findingKeyOf(e)
				ks := keyString(k)
				if ks == last || seen[ks] { // its alias entry in the same group; a recent one
					continue
				}
				last, keys = ks, append(keys, k)
			}
			p.rows, p.err = s.findingRows(ctx, keys)
		}
		select {
		case pages <- p:
		case <-ctx.Done():
			return
		}
		if p.err != nil {
			return
		}
	}
}

// findingRows reads findings by key, strongly consistent.
func (s *Store) findingRows(ctx context.Context, keys []item) ([]findingRow, error) {
	items, err := s.batchGetAll(ctx, "get findings", keys)
	if err != nil {
		return nil, err
	}
	rows := make([]findingRow, 0, len(items))
	for _, it := range items {
		rows = append(rows, rowFrom(it))
	}
	return rows, nil
}

// recentKeysIn lists the findings of g's recent recordings (its RECENT
// items of the recent window) whose scans are in r, each once.
func (s *Store) recentKeysIn(ctx context.Context, g groupKey, r scanRange, now time.Time) ([]item, error) {
	keys, err := s.recentKeys(ctx, g, now)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	in := keys[:0]
	for _, k := range keys {
		if ks := keyString(k); r.has(parseScanPK(getS(k, aPK))) && !seen[ks] {
			seen[ks], in = true, append(in, k)
		}
	}
	return in, nil
}

// Reevaluation reads a re-evaluation: its work item and its steps'
// markers (two round trips). Its counts are those of the steps done; once
// complete, its totals.
func (s *Store) Reevaluation(ctx context.Context, id int64) (scangate.Reevaluation, error) {
	it, err := s.WorkItem(ctx, id)
	if err != nil || it.Kind != KindAllowlist && it.Kind != KindExpiry {
		if err == nil || scangate.KindOf(err) == scangate.KindNotFound {
			err = scangate.Errorf(scangate.KindNotFound, "no re-evaluation has the id %d", id)
		}
		return scangate.Reevaluation{}, err
	}
	p, _, err := readReeval(it)
	if err != nil {
		return scangate.Reevaluation{}, err
	}
	r := scangate.Reevaluation{ID: it.ID, AllowlistID: p.Allowlist, Cause: it.Kind, Status: it.Status, StartedAt: scangate.At(it.CreatedAt)}
	if it.Status == work.Complete {
		done, at := it.Totals["findings"], scangate.At(it.CompletedAt)
		r.FindingsTotal, r.FindingsDone, r.CompletedAt = &done, done, &at
		r.Updated = &scangate.Updated{Secrets: it.Totals["secrets_updated"], Vulnerabilities: it.Totals["vulnerabilities_updated"]}
		return r, nil
	}
	if it.Steps < 0 {
		return r, nil
	}
	total := it.Planned["findings"]
	r.FindingsTotal = &total
	done, err := s.StepsDone(ctx, id)
	for _, res := range done {
		r.FindingsDone += res["findings"]
	}
	return r, err
}
