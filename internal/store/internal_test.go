package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/scangate"
)

func TestNewerTieBreak(t *testing.T) {
	const a, b = "2026-11-22T09:00:00.120Z", "2026-11-22T09:00:00.121Z"
	for _, c := range []struct {
		at    string
		id    int64
		oldAt string
		oldID int64
		want  bool
	}{
		{a, 5, "", 0, true}, // no scan yet
		{b, 5, a, 9, true},  // later time wins whatever the id
		{a, 9, b, 5, false}, // earlier time loses whatever the id
		{a, 9, a, 5, true},  // same time: the greater id
		{a, 5, a, 9, false}, // same time, smaller id
		{a, 5, a, 5, false}, // the same scan is not newer than itself
		{"2026-11-22T09:00:01.000Z", 1, "2026-11-22T09:00:00.999Z", 2, true},
	} {
		if got := newer(c.at, c.id, c.oldAt, c.oldID); got != c.want {
			t.Errorf("newer(%s #%d than %s #%d) = %v; want %v", c.at, c.id, c.oldAt, c.oldID, got, c.want)
		}
	}
}

func TestPRRecordFollowsNewestScans(t *testing.T) {
	at := func(ms int) scangate.Time { return scangate.At(time.UnixMilli(int64(1_700_000_000_000 + ms))) }
	counts := func(r prRecord) (int64, int64) { return r.counts() }
	r := prRecord{PR: scangate.PR{ID: 1}, cats: map[catKey]catScan{}}
	sec := scangate.Scan{ID: 1, Type: scangate.ScanSecret, Category: "gitleaks", CreatedAt: at(10), Sev: scangate.SevCounts{0, 3}}
	r, changed := r.with(sec, scangate.PRRef{Name: "first", Link: "l1"})
	if s, _ := counts(r); !changed || s != 3 || r.LastScan != at(10) || r.Name != "first" {
		t.Fatalf("after the first scan: %+v", r)
	}
	// An older vulnerability scan sets the vulnerability count but not last_scan or the name.
	vul := scangate.Scan{ID: 2, Type: scangate.ScanVulnerability, Category: "semgrep", CreatedAt: at(5), Sev: scangate.SevCounts{1, 0, 3}}
	r, changed = r.with(vul, scangate.PRRef{Name: "older", Link: "l2"})
	if _, v := counts(r); !changed || v != 4 || r.LastScan != at(10) || r.Name != "first" {
		t.Fatalf("after an older scan of the other type: %+v", r)
	}
	// An older secret scan of the same category changes nothing.
	if _, changed = r.with(scangate.Scan{ID: 3, Type: scangate.ScanSecret, Category: "gitleaks", CreatedAt: at(9), Sev: scangate.SevCounts{9}}, scangate.PRRef{}); changed {
		t.Error("an older secret scan of its category changed the record")
	}
	// An older one of another category stands beside it: the counts are sums.
	r, _ = r.with(scangate.Scan{ID: 3, Type: scangate.ScanSecret, Category: "trufflehog", CreatedAt: at(9), Sev: scangate.SevCounts{0, 0, 0, 2}}, scangate.PRRef{})
	if s, _ := counts(r); s != 5 || len(r.cats) != 3 {
		t.Fatalf("after a secret scan of another category: %d secrets, %d categories", s, len(r.cats))
	}
	// A tie in time goes to the greater id.
	r, _ = r.with(scangate.Scan{ID: 4, Type: scangate.ScanSecret, Category: "gitleaks", CreatedAt: at(10)}, scangate.PRRef{Name: "tie"})
	if s, _ := counts(r); s != 2 || r.lastScanID != 4 || r.Name != "tie" {
		t.Fatalf("after a scan at the same instant with a greater id: %+v", r)
	}
	// The newest scan that named a commit sets the head.
	r, _ = r.with(scangate.Scan{ID: 6, Type: scangate.ScanSecret, Category: "x", CreatedAt: at(20), CommitSHA: strings.Repeat("a", 40)}, scangate.PRRef{})
	r, _ = r.with(scangate.Scan{ID: 5, Type: scangate.ScanSecret, Category: "y", CreatedAt: at(15), CommitSHA: strings.Repeat("b", 40)}, scangate.PRRef{})
	r, _ = r.with(scangate.Scan{ID: 7, Type: scangate.ScanSecret, Category: "z", CreatedAt: at(30)}, scangate.PRRef{})
	if r.headSHA != strings.Repeat("a", 40) {
		t.Errorf("head %q; want the newest scan's that named one", r.headSHA)
	}
}

// cancelDB answers every transaction with a cancellation whose reasons are
// given by position, as DynamoDB does.
type cancelDB struct {
	DB
	codes []string
}

func (d cancelDB) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	reasons := make([]types.CancellationReason, len(d.codes))
	for i, c := range d.codes {
		reasons[i].Code = aws.String(c)
	}
	return nil, &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: reasons}
}

// TestCancellationsAreReadByLabel: a failed condition is reported by the
// label of its item, wherever the item stands, so adding an item (an audit
// entry, say) shifts the meaning of none.
func TestCancellationsAreReadByLabel(t *testing.T) {
	build := func(s *Store, extraFirst bool) *tx {
		t := s.newTx()
		if extraFirst {
			t.put("audit", item{}, nil)
		}
		t.put(lUser, item{}, nil)
		t.put(lUsername, item{}, nil)
		t.put(lEmail, item{}, nil)
		return t
	}
	for _, c := range []struct {
		extra bool
		codes []string
		want  string
	}{
		{false, []string{"None", codeConditionFailed, "None"}, lUsername},
		{false, []string{"None", "None", codeConditionFailed}, lEmail},
		{true, []string{"None", "None", codeConditionFailed, "None"}, lUsername},
		{true, []string{"None", "None", "None", codeConditionFailed}, lEmail},
	} {
		s := New(cancelDB{codes: c.codes}, "t", WithRetry(retry.Immediate))
		err := s.commit(context.Background(), "create user", build(s, c.extra))
		for _, l := range []string{lUser, lUsername, lEmail, "audit"} {
			if failed(err, l) != (l == c.want) {
				t.Errorf("codes %v: failed(%s) = %v", c.codes, l, failed(err, l))
			}
		}
		if lostRace(err) {
			t.Errorf("codes %v: a failed condition read as a conflict", c.codes)
		}
	}
	s := New(cancelDB{codes: []string{"None", codeConflict}}, "t")
	if err := s.commit(context.Background(), "op", build(s, false)); !lostRace(err) || failed(err, lUsername) {
		t.Errorf("a conflict: %v", err)
	}
	// Throttling of a transaction is no cancellation by condition: 503.
	s = New(cancelDB{codes: []string{"None", "ThrottlingError"}}, "t")
	err := s.commit(context.Background(), "op", build(s, false))
	if isCancelled(err) || scangate.KindOf(err) != scangate.KindUnavailable {
		t.Errorf("a throttled transaction: %v", err)
	}
	var de *scangate.Error
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "op") {
		t.Errorf("the error does not name the operation: %v", err)
	}
}

// firstRecent is the first RECENT item of a part.
func firstRecent(scanID int64, ns scangate.NewScan, base int, fs []scangate.Finding) item {
	var first item
	_ = recentItems(scanID, ns, base, fs, time.Now(), func(it item) error {
		if first == nil {
			first = it
		}
		return nil
	})
	return first
}

// worstFinding is the largest finding, the i-th of the scan of the
// largest id: every name as long as it may be, in 4-byte characters, as
// many aliases (each a group) as it may have, judged by as many
// allowlists in each group as a finding keeps.
func worstFinding(i int) (findingRow, scangate.Finding) {
	maxRunes := func(n int) string { return strings.Repeat("\U0001F600", n) }
	maxID := int64(math.MaxInt64)
	name := maxRunes(scangate.MaxNameLen)
	aliases := make([]string, scangate.MaxAliases)
	for i := range aliases {
		aliases[i] = maxRunes(scangate.MaxNameLen-1) + string(rune('a'+i))
	}
	line := maxID
	f := scangate.Finding{Name: name, Aliases: aliases, Rule: maxRunes(scangate.MaxNameLen), Path: maxRunes(scangate.MaxTextLen), Line: &line}
	ref := scangate.FindingRef{Type: scangate.ScanVulnerability, Name: name, Aliases: aliases, RepoID: maxID, VcID: maxID, Path: f.Path}
	row := newRow(key(scanPK(maxID), findingSK(i)), maxID, ref, true, scangate.SeverityCritical)
	for j := range row.groups {
		ids := make([]int64, maxCovering)
		for k := range ids {
			ids[k] = maxID - int64(k)
		}
		row.by[j] = ids
	}
	return row, f
}

// TestWorstCaseReevaluationTx cuts the transactions of a re-evaluation of
// a scan of the largest findings (as a step reads them back) and checks
// DynamoDB's limits: 100 items and 4 MB a transaction, the items updated
// counted whole.
func TestWorstCaseReevaluationTx(t *testing.T) {
	at := scangate.At(time.Now())
	worst, pr, policy := worstScanAndPR(t, at)
	sizes := map[string]int{keyString(scanKey(worst.ID)): itemSize(scanItem(worst))}
	var rows []findingRow
	var idx []int
	for i := range 3 * unitRows {
		row, f := worstFinding(i)
		it := findingItems(row, i, f)[0]
		sizes[keyString(keyOf(it))] = itemSize(it)
		rows, idx = append(rows, rowFrom(it)), append(idx, i)
	}
	g := group{groupKey: rows[0].groups[0], gv: 2, rules: map[int64]scangate.Rule{1: {Type: scangate.ScanVulnerability,
		Name: rows[0].ref.Name, Active: true, Global: true}}}
	s := &Store{table: "t"}
	c := &chain{scans: []scanLeft{{sc: worst, idx: idx, size: sizes[keyString(scanKey(worst.ID))]}}, pr: pr, p: policy}
	for len(c.scans) > 0 {
		for _, pack := range s.wave(g, rows, []*chain{c}, scangate.CauseAllowlist, at.Time) {
			items, bytes := 0, 0
			for _, k := range pack {
				for _, it := range k.u.t.items {
					items++
					switch {
					case it.Put != nil:
						bytes += itemSize(it.Put.Item)
					case it.Update != nil:
						bytes += sizes[keyString(it.Update.Key)]
					}
				}
			}
			if items > txMaxItems || bytes > 4_000_000 {
				t.Errorf("a re-evaluation's transaction of %d items, %d bytes; DynamoDB takes 100 items and 4 MB", items, bytes)
			}
		}
	}
}

// worstScanAndPR are the largest scan (64 KiB of other_details of the
// characters JSON escapes most, every name and link as long as it may be,
// in 4-byte characters) and the largest PR record: MaxCategories of the
// longest categories, judged by a policy that requires as many others, so
// that its gate has twice as many reasons.
func worstScanAndPR(t *testing.T, at scangate.Time) (scangate.Scan, prRecord, scangate.Policy) {
	t.Helper()
	maxRunes := func(n int) string { return strings.Repeat("\U0001F600", n) } // 4 bytes each
	maxID := int64(math.MaxInt64)
	url := maxRunes(scangate.MaxTextLen)
	scan := scangate.Scan{ID: maxID, PRID: maxID, PRNumber: maxID, VcID: maxID, WebhookID: maxID, RepoID: maxID,
		VcType: maxRunes(64), Type: scangate.ScanVulnerability, CreatedAt: at, VcName: maxRunes(scangate.MaxNameLen),
		RepoName: maxRunes(scangate.MaxNameLen), Status: "processing", OtherDetails: json.RawMessage(`{"x":"` + strings.Repeat("<", scangate.MaxOtherDetails-8) + `"}`),
		StatURL: &url, SecretCount: maxID, VulnerabilityCount: maxID, Category: strings.Repeat("c", scangate.MaxCategoryLen),
		CommitSHA: strings.Repeat("f", 64), Ref: maxRunes(scangate.MaxRefLen), Sev: scangate.SevCounts{maxID, maxID, maxID, maxID, maxID}}
	scan.OtherDetails = scanDetails(scan.OtherDetails, scan)
	pr := prRecord{PR: scangate.PR{ID: maxID, Number: maxID, Name: url, Link: url, RepoID: maxID, VcID: maxID, WebhookID: maxID,
		CreatedAt: at, LastScan: at, SecretCount: maxID, VulnerabilityCount: maxID}, lastScanID: maxID, cats: map[catKey]catScan{},
		headSHA: strings.Repeat("f", 64), headAt: at.String() + "#" + strings.Repeat("9", 19), repoName: scan.RepoName, gseq: maxID - 1, ver: maxID - 1}
	policy := scangate.Policy{BlockSeverity: map[scangate.ScanType]scangate.Severity{scangate.ScanSecret: scangate.SeverityMedium,
		scangate.ScanVulnerability: scangate.SeverityMedium}, BlockOnMissing: true}
	for i := range scangate.MaxCategories {
		cat := strings.Repeat("c", scangate.MaxCategoryLen-2) + fmt.Sprintf("%02d", i)
		pr.cats[catKey{scangate.ScanVulnerability, cat}] = catScan{CategoryScan: scangate.CategoryScan{Type: scangate.ScanVulnerability,
			Category: cat, ScanID: maxID, CreatedAt: at, Status: "processing", Sev: scan.Sev}, cver: maxID}
		policy.Required = append(policy.Required, scangate.Requirement{Type: scangate.ScanSecret, Category: cat})
	}
	pr, _ = pr.judge(policy, at)
	if len(pr.gate.Reasons) != 2*scangate.MaxCategories {
		t.Fatalf("the largest PR record's gate has %d reasons", len(pr.gate.Reasons))
	}
	return scan, pr, policy
}

// TestWorstCaseRecordingCommit builds the largest transaction of a
// recording (scansPerCommit of the largest scans, each with its audit
// entry and its scan.recorded, the largest PR record and its
// pr.gate_changed, the once key) and checks DynamoDB's limits, 100 items
// and 4 MB, each event's 400 KB, and the event bus's 256 KiB an event.
func TestWorstCaseRecordingCommit(t *testing.T) {
	at := scangate.At(time.Now())
	worst, old, policy := worstScanAndPR(t, at)
	scans := make([]scangate.Scan, scansPerCommit)
	for i := range scans {
		scans[i] = worst
		scans[i].ID -= int64(i + 1)
		scans[i].CreatedAt = scangate.At(at.Add(time.Second)) // newer than the PR's scans
		scans[i].Category = old.categories()[i].Category      // the PR keeps its MaxCategories pairs
		scans[i].OtherDetails = scanDetails(json.RawMessage(`{"x":"`+strings.Repeat("<", scangate.MaxOtherDetails-8)+`"}`), scans[i])
	}
	who := scangate.Who{Actor: &scangate.Actor{UserID: math.MaxInt64, Username: strings.Repeat("u", scangate.UsernameMax), TokenID: math.MaxInt64},
		RequestID: strings.Repeat("r", 128), SourceIP: "2001:db8::1"}
	s := &Store{table: "t"}
	tx, err := s.recordingTx(old, true, scans, scangate.PRRef{Number: old.Number, Name: old.Name, Link: old.Link},
		"upload#9223372036854775807#99", who, policies{global: policy})
	if err != nil {
		t.Fatal(err)
	}
	total, events := 0, 0
	for i, it := range tx.items {
		size := itemSize(it.Put.Item)
		total += size
		if size > 400_000 {
			t.Errorf("item %d (%s): %d bytes", i, tx.labels[i], size)
		}
		if tx.labels[i] == lEvent {
			events++
			body := getS(it.Put.Item, aData)
			if len(body)+200 > 256<<10 { // the data, and the body's id, type and time around it
				t.Errorf("an event of %d bytes; the bus takes 256 KiB", len(body))
			}
		}
	}
	t.Logf("%d items, %d bytes, %d events", len(tx.items), total, events)
	if len(tx.items) > txMaxItems || total > 4_000_000 || events != scansPerCommit+1 {
		t.Errorf("the recording's transaction: %d items, %d bytes, %d events; DynamoDB takes 100 items and 4 MB", len(tx.items), total, events)
	}
}

// TestWorstCaseItemSizes builds the largest item of every kind that valid
// requests can make and checks DynamoDB's limits: 400 KB an item, 2,048
// bytes a partition key, 1,024 a sort key (the index's keys alike).
func TestWorstCaseItemSizes(t *testing.T) {
	maxRunes := func(n int) string { return strings.Repeat("\U0001F600", n) } // 4 bytes each
	maxID := int64(math.MaxInt64)
	ids := func(n int) []int64 {
		l := make([]int64, n)
		for i := range l {
			l[i] = maxID - int64(i)
		}
		return l
	}
	at := scangate.At(time.Now())
	scan, pr, policy := worstScanAndPR(t, at)
	url := *scan.StatURL
	user := scangate.User{ID: maxID, Username: strings.Repeat("u", scangate.UsernameMax), Email: maxRunes(scangate.EmailMax),
		Role: scangate.RoleReadonly, PasswordHash: strings.Repeat("h", 128), CreatedAt: at, UpdatedAt: at,
		AddedBy: &maxID, UpdatedBy: &maxID, TokensValidFrom: time.Now()}
	row, f := worstFinding(99_999)
	name := f.Name
	rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: name, Active: true, Global: true,
		Repos: ids(scangate.MaxScopeIDs), Vcs: ids(scangate.MaxScopeIDs)}
	for range scangate.MaxPaths {
		rule.Paths = append(rule.Paths, maxRunes(scangate.MaxPathGlobLen))
	}
	reason := "false_positive"
	allow := scangate.Allowlist{ID: maxID, Rule: rule, Comments: ids(MaxComments), CreatedBy: maxID, UpdatedBy: maxID, CreatedOn: at, UpdatedOn: at,
		Reason: reason, ExpiresAt: &at}
	fs := make([]scangate.Finding, recentChunk)
	for i := range fs {
		fs[i] = f
	}
	ns := scangate.NewScan{Type: scangate.ScanVulnerability, RepoID: maxID, VcID: maxID}
	polJSON, _ := json.Marshal(policy)
	_, workItem, err := newWork(maxID, KindPolicy, policyParams{Version: maxID}, time.Now(), maxID)
	if err != nil {
		t.Fatal(err)
	}
	upload, err := uploadItem(scangate.Upload{ID: maxID, Envelope: scangate.NewScan{VcType: scan.VcType, VcID: maxID, VcName: scan.VcName,
		RepoID: maxID, RepoName: scan.RepoName, WebhookID: maxID, PR: scangate.PRRef{Number: maxID, Name: url, Link: url}, Status: "processing",
		StatURL: &url, OtherDetails: json.RawMessage(`{"x":"` + strings.Repeat("<", scangate.MaxOtherDetails-8) + `"}`), Category: scan.Category,
		CommitSHA: scan.CommitSHA, Ref: scan.Ref}, CreatedBy: maxID, TokenHash: strings.Repeat("f", 64),
		Creator: scangate.Actor{UserID: maxID, Username: user.Username, TokenID: maxID}, CreatedAt: at, ExpiresAt: at}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	login := loginFailKey(strings.Repeat("u", scangate.UsernameMax))
	for i := range scangate.MaxLoginAttempts {
		login[slotAttr(i)], login[failedAttr(i)] = num(time.Now().UnixMilli()), boolean(true)
	}
	login[aTTL] = num(time.Now().Unix())
	kinds := map[string]item{
		"user":            userItem(user, maxID),
		"username":        merge(usernameKey(user.Username), merge(item{aUserID: num(maxID)}, loginAttrs(user))),
		"e-mail":          merge(emailKey(user.Email), item{aUserID: num(maxID)}),
		"token":           tokenItem(scangate.Token{Hash: strings.Repeat("f", 64), UserID: maxID, Kind: "login", CreatedAt: time.Now(), ExpiresAt: time.Now()}),
		"login attempts":  login,
		"scan":            scanItem(scan),
		"upload":          upload,
		"finding":         findingItems(row, 99_999, f)[0],
		"alias entry":     findingItems(row, 99_999, f)[20],
		"recent":          firstRecent(maxID, ns, math.MaxInt-recentChunk, fs),
		"PR":              pr.item(),
		"allowlist":       allowItem(allow, maxID),
		"allowlist event": eventItem(scangate.NewEvent(scangate.EventAllowlistUpdated, at.Time, scangate.ViewAllowlist(allow, at.Time))),
		"rule":            ruleItem(groupOf(rule.Type, rule.Name), maxID, rule),
		"comment":         commentItem(maxID, maxID, maxID, maxRunes(scangate.MaxCommentLen), time.Now()),
		"group version":   merge(groupOf(rule.Type, rule.Name).versionKey(), item{aGroupVer: num(maxID), aN: num(maxID)}),
		"global policy":   merge(globalPolicyKey(), item{aPolicy: str(string(polJSON)), aPolicyVer: num(maxID), aUpdatedAt: str(at.String()), aUpdatedBy: num(maxID)}),
		"repo policy":     merge(repoPolicyKey(maxID), item{aPolicy: str(string(polJSON)), aUpdatedAt: str(at.String()), aUpdatedBy: num(maxID)}),
		"work":            merge(workItem, item{aSteps: num(maxID), aPlan: str(`{"prs":9223372036854775807}`), aTotals: str(`{"prs":9223372036854775807,"changed":9223372036854775807}`)}),
		"once":            merge(onceKey("upload#9223372036854775807#99"), item{aScanID: numList(ids(scansPerCommit)), aTTL: num(maxID)}),
		"written":         merge(writtenKey("upload#9223372036854775807", maxID), item{aScanID: numList(ids(40)), aTTL: num(maxID)}),
	}
	for kind, it := range kinds {
		size := itemSize(it)
		t.Logf("%-15s %7d bytes", kind, size)
		if strings.HasSuffix(kind, "event") && len(getS(it, aData))+200 > 256<<10 {
			t.Errorf("%s: %d bytes of data; the event bus takes 256 KiB an event", kind, len(getS(it, aData)))
		}
		if size > 400_000 {
			t.Errorf("%s: %d bytes; DynamoDB allows 400 KB", kind, size)
		}
		for _, k := range []struct {
			name string
			max  int
		}{{aPK, 2048}, {aSK, 1024}, {aGSI1PK, 2048}, {aGSI1SK, 1024}, {aGSI2PK, 2048}, {aGSI2SK, 1024}, {aGSI3PK, 2048}, {aGSI3SK, 1024}} {
			if n := len(getS(it, k.name)); n > k.max {
				t.Errorf("%s: %s of %d bytes; DynamoDB allows %d", kind, k.name, n, k.max)
			}
		}
	}
}
