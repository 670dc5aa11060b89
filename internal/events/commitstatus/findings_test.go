package commitstatus_test

import (
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/scangate"
)

func blocking(name, rule, path string, line int64, sev scangate.Severity, state string) scangate.BlockingFinding {
	f := scangate.BlockingFinding{ScanID: 3, Type: scangate.ScanSecret, Category: "gitleaks",
		RecordedFinding: scangate.RecordedFinding{Name: name, Rule: rule, Path: path, Severity: sev, BaselineState: state}}
	if line > 0 {
		f.Line = &line
	}
	return f
}

// TestBlockingScansReadTheGate: the scans whose findings are read are
// those the gate's findings reasons name, with the policy's lowest
// blocking severity of their type and block_on; other reasons name none.
func TestBlockingScansReadTheGate(t *testing.T) {
	g := gate(t, `{"pr_id":17,"blocked":true,"reasons":[{"kind":"findings","scan_type":"VULNERABILITY","category":"semgrep","scan_id":4,"count":2},`+
		`{"kind":"pending","scan_type":"SECRET","category":"gitleaks","scan_id":5,"count":0},{"kind":"missing","scan_type":"SECRET","category":"trufflehog","count":0}],`+
		`"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"high"},"block_on":"new"}}`)
	got := commitstatus.BlockingScans(g)
	if len(got) != 1 || got[0] != (scangate.BlockingScan{ScanID: 4, Type: scangate.ScanVulnerability, Category: "semgrep", Min: scangate.SeverityHigh, NewOnly: true}) {
		t.Fatalf("blocking scans %+v", got)
	}
	g.Policy.BlockOn = ""
	if got := commitstatus.BlockingScans(g); got[0].NewOnly {
		t.Errorf("a gate without block_on blocks on every finding: %+v", got)
	}
	if n := commitstatus.Blocking(g); n != 2 {
		t.Errorf("%d blocking findings, want the reason's 2", n)
	}
}

// TestAnnotationsAreSentOnce: a finding without a path or a line has no
// annotation; an annotation names the finding's category, rule and
// severity and says when it is new; Unsent leaves out those sent (by key)
// and never lets a run hold more than MaxAnnotated.
func TestAnnotationsAreSentOnce(t *testing.T) {
	fs := []scangate.BlockingFinding{
		blocking("sha256:aa", "aws-access-key", "src/a.go", 3, scangate.SeverityHigh, "new"),
		blocking("sha256:bb", "", "src/b.go", 0, scangate.SeverityHigh, "new"),
		blocking("sha256:cc", "", "", 4, scangate.SeverityHigh, "new"),
		blocking("sha256:dd", "", "src/d.go", 9, scangate.SeverityLow, "unchanged"),
	}
	as := commitstatus.AnnotationsOf(fs)
	if len(as) != 2 || as[0].Path != "src/a.go" || as[0].StartLine != 3 || as[0].EndLine != 3 ||
		as[0].Title != "New gitleaks: aws-access-key (high)" || !strings.Contains(as[0].Message, "sha256:aa") ||
		as[1].Title != "gitleaks: sha256:dd (low)" {
		t.Fatalf("annotations %+v", as)
	}
	if as[0].Key() == as[1].Key() || len(as[0].Key()) != 16 {
		t.Errorf("keys %q %q", as[0].Key(), as[1].Key())
	}
	// The same finding, once unchanged against a moved base, is the same
	// annotation: it is not sent again.
	moved := fs[0]
	moved.BaselineState = "unchanged"
	if again := commitstatus.AnnotationsOf([]scangate.BlockingFinding{moved}); again[0].Key() != as[0].Key() || again[0].Title == as[0].Title {
		t.Errorf("the finding's annotation after its base moved: %+v, key %s, want %s", again[0], again[0].Key(), as[0].Key())
	}
	if u := commitstatus.Unsent(as, []string{as[0].Key()}); len(u) != 1 || u[0] != as[1] {
		t.Errorf("unsent %+v", u)
	}
	if u := commitstatus.Unsent(append(as, as...), nil); len(u) != 2 {
		t.Errorf("the same annotation twice is sent once: %+v", u)
	}
	full := make([]string, commitstatus.MaxAnnotated-1)
	for i := range full {
		full[i] = strings.Repeat("0", 15) + string(rune('a'+i%6))
	}
	if u := commitstatus.Unsent(as, full); len(u) != 1 || u[0] != as[0] {
		t.Errorf("a run with %d annotations takes one more: %+v", len(full), u)
	}
}

// TestNoteOfAGate: the note begins with scangate's marker and the gate's
// description, has the categories' table, lists the blocking findings in
// the order given (new first) with how many there are in all, shows what
// a recorder sent as code (no mention, no link, no table cell broken out
// of), and links to the dashboard.
func TestNoteOfAGate(t *testing.T) {
	g := gate(t, `{"pr_id":17,"blocked":true,"reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":3,"count":3}],`+
		`"categories":[{"scan_type":"SECRET","category":"gitleaks","new_count":2,"unchanged_count":1,"absent_count":0}],`+policyCritical+`}`)
	fs := []scangate.BlockingFinding{
		blocking("@all see [x](https://evil.example)", "rule|x", "src/`a`.go", 3, scangate.SeverityHigh, "new"),
		blocking("sha256:bb", "r", "src/b.go", 0, scangate.SeverityHigh, "unchanged"),
	}
	note := commitstatus.NoteOf(g, "https://scangate.example.com", fs, false)
	for _, want := range []string{
		commitstatus.NoteMarker + "\n### :no_entry: scangate: Blocked: 3 secrets\n",
		"| SECRET | gitleaks | 3 | 2 | 1 | 0 |  |",
		"**Blocking findings** (2 of 3, new first, then the most severe):",
		"| high | `new` | `gitleaks` | `rule\\|x` | `@all see [x](https://evil.example)` | `src/'a'.go` | 3 |\n| high | `unchanged` |",
		"[Open the pull request in scangate](https://scangate.example.com/#/pr/17)",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("the note has no %q:\n%s", want, note)
		}
	}
	if strings.Index(note, "`new`") > strings.Index(note, "`unchanged`") {
		t.Errorf("the new finding is not first:\n%s", note)
	}
	clear := gate(t, `{"pr_id":17,"blocked":false,"reasons":[],"categories":[{"scan_type":"SECRET","category":"gitleaks"}],`+policyCritical+`}`)
	note = commitstatus.NoteOf(clear, "", nil, false)
	if !strings.Contains(note, ":white_check_mark: scangate: Not blocked") || strings.Contains(note, "**Blocking findings**") || strings.Contains(note, "/#/pr/") {
		t.Errorf("the note of a clear gate:\n%s", note)
	}
	many := make([]scangate.BlockingFinding, 60)
	for i := range many {
		many[i] = fs[1]
	}
	g.Reasons[0].Count = 60
	if note = commitstatus.NoteOf(g, "", many, false); strings.Count(note, "`sha256:bb`") != commitstatus.MaxNoteFindings || !strings.Contains(note, "(50 of 60,") {
		t.Errorf("a note lists at most %d findings:\n%s", commitstatus.MaxNoteFindings, note)
	}
	g.Reasons[0].Count = 2
	if note = commitstatus.NoteOf(g, "", fs, false); !strings.Contains(note, "(2 findings, new first") {
		t.Errorf("all the findings:\n%s", note)
	}
}
