package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A finding is an item in its scan's partition:
//
//	SCAN#<scan> / FINDING#<nnnnnn>      the finding; GSI1: its name's group
//	SCAN#<scan> / ALIAS#<nnnnnn>#<kk>   one entry per alias; GSI1: the alias's group
//
// so that a change of any group a finding belongs to finds it through the
// index. A finding stores its judgement per group (by: the ids of the
// allowlists covering it, keyed by the index of the group among its keys),
// the version of each group its judgement was made at (gvs, keyed alike),
// and sup, whether it is suppressed at all (in source, or by any group).
// Each group's re-evaluation rewrites only its own entry, under the
// finding's version fv, and never one made at a newer version of the group
// than its own.

// findingPrefix is the sort key prefix of a scan's findings.
const findingPrefix = "FINDING#"

func findingSK(i int) string { return findingPrefix + fmt.Sprintf("%06d", i) }

func aliasSK(i, k int) string { return fmt.Sprintf("ALIAS#%06d#%02d", i, k) }

func findingIndexSK(scanID int64, i int) string { return fmt.Sprintf("%019d#%06d", scanID, i) }

func scanPK(id int64) string { return KeyScan + strconv.FormatInt(id, 10) }

func parseScanPK(pk string) int64 {
	id, _ := strconv.ParseInt(strings.TrimPrefix(pk, KeyScan), 10, 64)
	return id
}

// findingKeyOf returns the key of the finding an index entry stands for:
// the finding itself, or the finding an alias entry belongs to.
func findingKeyOf(it item) item {
	sk := getS(it, aSK)
	if rest, ok := strings.CutPrefix(sk, "ALIAS#"); ok {
		n, _, _ := strings.Cut(rest, "#")
		sk = KeyFinding + n
	}
	return key(getS(it, aPK), sk)
}

// findingRow is one stored finding as judgement sees it.
type findingRow struct {
	key    item
	scanID int64
	ref    scangate.FindingRef
	src    bool              // suppressed in source
	unch   bool              // unchanged against its scan's baseline (else new, or a branch's)
	sev    scangate.Severity // how severe it is
	by     map[int][]int64   // covering allowlist ids by group index
	gvs    map[int]int64     // the group version of each group's judgement
	fv     int64             // version of the judgement
	groups []groupKey        // by index: ref.Keys() as groups
	size   int               // the item's size as read (itemSize), 0 for a new finding
}

func newRow(k item, scanID int64, ref scangate.FindingRef, src bool, sev scangate.Severity) findingRow {
	r := findingRow{key: k, scanID: scanID, ref: ref, src: src, sev: severityOf(sev), by: map[int][]int64{}, gvs: map[int]int64{}}
	for _, key := range ref.Keys() {
		r.groups = append(r.groups, groupKey{typ: ref.Type, key: key})
	}
	return r
}

// severityOf is a finding's severity as stored: high when none was given
// (POST /pr/scan's default, and findings recorded before severities).
func severityOf(s scangate.Severity) scangate.Severity {
	if s.Valid() {
		return s
	}
	return scangate.SeverityHigh
}

// sup reports whether the finding is suppressed: in source, or by a group.
func (r findingRow) sup() bool { return r.src || len(r.by) > 0 }

// groupIndex is the index of g among the finding's groups, or -1.
func (r findingRow) groupIndex(g groupKey) int { return slices.Index(r.groups, g) }

// judged returns the row's judgement with group j's covering ids set.
func (r findingRow) judged(j int, ids []int64) map[int][]int64 {
	by := maps.Clone(r.by)
	if len(ids) == 0 {
		delete(by, j)
	} else {
		by[j] = ids
	}
	return by
}

// byAttr is a judgement as an attribute: NULL when empty, since the
// embedded test server neither stores empty maps nor applies REMOVE.
func byAttr(by map[int][]int64) types.AttributeValue {
	if len(by) == 0 {
		return null()
	}
	m := item{}
	for j, ids := range by {
		m[strconv.Itoa(j)] = numList(ids)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// gvsAttr is the group versions of a finding's judgements (never empty:
// every finding has a group).
func gvsAttr(gvs map[int]int64) types.AttributeValue {
	m := item{}
	for j, v := range gvs {
		m[strconv.Itoa(j)] = num(v)
	}
	return &types.AttributeValueMemberM{Value: m}
}

// gvsFrom reads a finding's judgement versions; a finding recorded before
// they were kept reads 0 for every group (older than any change).
func gvsFrom(it item) map[int]int64 {
	gvs := map[int]int64{}
	if m, ok := it[aJudgedAt].(*types.AttributeValueMemberM); ok {
		for k, v := range m.Value {
			j, _ := strconv.Atoi(k)
			gvs[j] = parseN(v)
		}
	}
	return gvs
}

func byFrom(it item) map[int][]int64 {
	by := map[int][]int64{}
	if m, ok := it[aBy].(*types.AttributeValueMemberM); ok {
		for k := range m.Value {
			j, _ := strconv.Atoi(k)
			by[j] = getIDs(m.Value, k)
		}
	}
	return by
}

func rowFrom(it item) findingRow {
	ref := scangate.FindingRef{Type: scangate.ScanType(getS(it, aType)), Name: getS(it, aName),
		Aliases: getStrings(it, aAliases), RepoID: getN(it, aRepoID), VcID: getN(it, aVcID), Path: getS(it, aPath),
		Fingerprint: getS(it, aFP)}
	r := newRow(keyOf(it), parseScanPK(getS(it, aPK)), ref, getBool(it, aInSource, false), scangate.Severity(getS(it, aSev)))
	r.by, r.gvs, r.fv, r.size = byFrom(it), gvsFrom(it), getN(it, aFindVer), itemSize(it)
	r.unch = getS(it, aBaselineState) == scangate.BaselineUnchanged
	return r
}

// findingItems are the items of a new finding: the finding and its alias
// entries, each in the index partition of its group.
func findingItems(r findingRow, i int, f scangate.Finding) []item {
	it := key(scanPK(r.scanID), findingSK(i))
	it[aType] = str(string(r.ref.Type))
	it[aName] = str(f.Name)
	if f.Rule != "" {
		it[aRule] = str(f.Rule)
	}
	if f.Path != "" {
		it[aPath] = str(f.Path)
	}
	if f.Line != nil {
		it[aLine] = num(*f.Line)
	}
	if f.Fingerprint != "" {
		it[aFP], it[aFPSource] = str(f.Fingerprint), str(f.FingerprintSource)
	}
	setStrings(it, aAliases, r.ref.Aliases)
	it[aRepoID] = num(r.ref.RepoID)
	it[aVcID] = num(r.ref.VcID)
	it[aSev] = str(string(r.sev))
	if r.src {
		it[aInSource] = boolean(true)
	}
	if len(r.by) > 0 {
		it[aBy] = byAttr(r.by)
	}
	it[aJudgedAt] = gvsAttr(r.gvs)
	it[aSup] = boolean(r.sup())
	it[aGSI1PK] = str(r.groups[0].findings())
	it[aGSI1SK] = str(findingIndexSK(r.scanID, i))
	items := []item{it}
	for k, g := range r.groups[1:] {
		a := key(scanPK(r.scanID), aliasSK(i, k+1))
		a[aGSI1PK] = str(g.findings())
		a[aGSI1SK] = str(findingIndexSK(r.scanID, i))
		items = append(items, a)
	}
	return items
}

// A recording also writes, into the partition of every group its findings
// belong to, RECENT items naming those findings (up to recentChunk a
// item). A re-evaluation reads the RECENT items of the last recentWindow
// with a strongly consistent query and judges those findings too: so a
// finding whose index entry DynamoDB has not made visible yet (the index
// is eventually consistent) is still judged by a change that comes after
// its recording. DynamoDB's TTL removes them a day later.
const recentChunk = 1000

func recentSK(at time.Time, scanID int64, chunk int) string {
	return fmt.Sprintf("RECENT#%013d#%019d#%04d", at.UnixMilli(), scanID, chunk)
}

// recentItems hands emit the RECENT items of a part of a recording: per
// group its findings belong to, the indexes of those findings (base is
// the index of the first of fs), up to recentChunk an item. An item's
// number is base and its chunk's: unique in its group for the scan, since
// the next part's base is past every index of this one.
func recentItems(scanID int64, ns scangate.NewScan, base int, fs []scangate.Finding, at time.Time, emit func(item) error) error {
	byGroup := map[groupKey][]int32{}
	var order []groupKey
	for i, f := range fs {
		for _, k := range findingRef(ns, f).Keys() {
			g := groupKey{typ: ns.Type, key: k}
			if byGroup[g] == nil {
				order = append(order, g)
			}
			byGroup[g] = append(byGroup[g], int32(i))
		}
	}
	for _, g := range order {
		idx := byGroup[g]
		for c := 0; c*recentChunk < len(idx); c++ {
			chunk := idx[c*recentChunk : min((c+1)*recentChunk, len(idx))]
			l := make([]types.AttributeValue, len(chunk))
			for k, i := range chunk {
				l[k] = num(int64(base) + int64(i))
			}
			it := key(g.pk(), recentSK(at, scanID, base+c))
			it[aScanID] = num(scanID)
			it[aIndexes] = &types.AttributeValueMemberL{Value: l}
			it[aTTL] = num(at.Add(expiredItemGrace).Unix())
			if err := emit(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// recentKeys returns the keys of the findings recorded into g within the
// recent window.
func (s *Store) recentKeys(ctx context.Context, g groupKey, now time.Time) ([]item, error) {
	if s.recentWindow <= 0 {
		return nil, nil
	}
	items, err := s.queryAll(ctx, "list recent recordings", &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(ref(aPK) + " = :pk AND " + ref(aSK) + " BETWEEN :from AND :to"),
		ExpressionAttributeValues: item{":pk": str(g.pk()),
			":from": str(recentSK(now.Add(-s.recentWindow), 0, 0)), ":to": str("RECENT#~")},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	var keys []item
	for _, it := range items {
		scanID := getN(it, aScanID)
		for _, i := range getIDs(it, aIndexes) {
			keys = append(keys, key(scanPK(scanID), findingSK(int(i))))
		}
	}
	return keys, nil
}
