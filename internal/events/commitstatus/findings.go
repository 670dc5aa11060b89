package commitstatus

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// The blocking findings of a gate, as a check run annotates them and a
// merge request's note lists them. Which findings block is read from the
// gate (its findings reasons and its policy), never decided again here.

// MaxAnnotated is the most blocking findings a gate's check run and note
// are built from (new first, then the most severe), and the most
// annotations a check run is ever sent.
const MaxAnnotated = 1000

// MaxRead is the most findings read to find them: a gate whose blocking
// scans hold more shows the first MaxAnnotated of those read.
const MaxRead = 50000

// BlockingScans are the scans whose findings block the gate, in the order
// of its reasons, with what of them blocks by the gate's policy: at or
// above the scan type's block_severity, new only under block_on new.
func BlockingScans(g Gate) []scangate.BlockingScan {
	var out []scangate.BlockingScan
	for _, r := range g.Reasons {
		if r.Kind != ReasonFindings || r.ScanID == nil || r.Count < 1 {
			continue
		}
		min := scangate.Severity(g.Policy.BlockSeverity[r.ScanType])
		if !min.Valid() {
			min = scangate.SeverityNone
		}
		out = append(out, scangate.BlockingScan{ScanID: *r.ScanID, Type: scangate.ScanType(r.ScanType), Category: r.Category,
			Min: min, NewOnly: g.Policy.BlockOn == scangate.BlockOnNew})
	}
	return out
}

// Blocking counts the findings that block a gate (its findings reasons).
func Blocking(g Gate) int64 {
	var n int64
	for _, r := range g.Reasons {
		if r.Kind == ReasonFindings {
			n += r.Count
		}
	}
	return n
}

// AnnotationsOf are the annotations of blocking findings, in their order:
// one per finding with a path and a line (the others have no place in
// the diff; the summary and the note count them).
func AnnotationsOf(fs []scangate.BlockingFinding) []Annotation {
	var out []Annotation
	for _, f := range fs {
		if f.Path == "" || f.Line == nil || *f.Line < 1 {
			continue
		}
		line := int(*f.Line)
		msg := fmt.Sprintf("%s %s finding of %s: %s", f.Severity, strings.ToLower(string(f.Type)), f.Category, f.Name)
		if f.Rule != "" {
			msg += "\nRule: " + f.Rule
		}
		if f.BaselineState != "" {
			msg += "\nBaseline: " + f.BaselineState
		}
		out = append(out, Annotation{Path: f.Path, StartLine: line, EndLine: line, Title: clip(titleOf(f), 255), Message: clip(msg, 4000),
			Finding: strings.Join([]string{string(f.Type), f.Category, f.Rule, f.Name, f.Path, strconv.Itoa(line)}, "\x00")})
	}
	return out
}

// titleOf names a finding in a line: its rule (or name), severity and
// whether it is new.
func titleOf(f scangate.BlockingFinding) string {
	what := f.Rule
	if what == "" {
		what = f.Name
	}
	t := fmt.Sprintf("%s: %s (%s)", f.Category, what, f.Severity)
	if f.BaselineState == scangate.BaselineNew {
		t = "New " + t
	}
	return t
}

// clip cuts s to at most n runes, ending it with "..." when it cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// Key names an annotation among those sent to a run: a hash of the
// finding it annotates (else of what it shows), so that one sent already
// is not appended again.
func (a Annotation) Key() string {
	h := sha256.New()
	parts := []string{a.Finding}
	if a.Finding == "" {
		parts = []string{a.Path, strconv.Itoa(a.StartLine), strconv.Itoa(a.EndLine), a.Title, a.Message}
	}
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Unsent are the annotations not among those sent (by Key), each once, so
// many that the run holds at most MaxAnnotated in all.
func Unsent(as []Annotation, sent []string) []Annotation {
	var out []Annotation
	seen := make(map[string]bool, len(sent))
	for _, k := range sent {
		seen[k] = true
	}
	room := MaxAnnotated - len(sent)
	for _, a := range as {
		if len(out) >= room {
			break
		}
		if k := a.Key(); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// MaxNoteFindings is the most blocking findings a merge request's note
// lists; the dashboard shows them all.
const MaxNoteFindings = 50

// NoteMarker begins every note scangate writes, so that people (and
// scangate's tests) tell it from others'.
const NoteMarker = "<!-- scangate -->"

// NoteOf is the Markdown of a merge request's note on a gate: its state
// and description, the table of its categories, and its blocking
// findings, new ones first (at most MaxNoteFindings, and how many there
// are), linked to the pull request's page in the dashboard. Whatever a
// recorder sent (names, rules, paths) is shown as code, so it can neither
// format the note nor mention anyone.
func NoteOf(g Gate, dashboard string, fs []scangate.BlockingFinding, truncated bool) string {
	state, desc := Describe(g)
	var b strings.Builder
	b.WriteString(NoteMarker + "\n")
	icon := map[State]string{Success: ":white_check_mark:", Failure: ":no_entry:", Pending: ":hourglass:"}[state]
	fmt.Fprintf(&b, "### %s scangate: %s\n\n", icon, desc)
	b.WriteString(summary(g))
	total := Blocking(g)
	if len(fs) > 0 {
		shown := fs[:min(len(fs), MaxNoteFindings)]
		fmt.Fprintf(&b, "\n**Blocking findings** (%s, new first, then the most severe):\n\n", shownOf(len(shown), total, truncated))
		b.WriteString("| Severity | Baseline | Category | Rule | Finding | Path | Line |\n|---|---|---|---|---|---|---:|\n")
		for _, f := range shown {
			line := ""
			if f.Line != nil {
				line = strconv.FormatInt(*f.Line, 10)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Severity, code(f.BaselineState), code(f.Category), code(f.Rule),
				code(f.Name), code(f.Path), line)
		}
	}
	if dashboard != "" {
		fmt.Fprintf(&b, "\n[Open the pull request in scangate](%s)\n", TargetURL(dashboard, g.PRID))
	}
	return b.String()
}

// shownOf says how many of the blocking findings a list shows.
func shownOf(shown int, total int64, truncated bool) string {
	if int64(shown) >= total && !truncated {
		return plural(int64(shown), "finding", "findings")
	}
	return fmt.Sprintf("%d of %d", shown, total)
}

// code is a table cell of text a recorder sent: a code span (no
// Markdown, no mention, no link inside), its backticks and line breaks
// replaced and its pipes escaped; empty for "".
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("`", "'", "\n", " ", "\r", " ", "|", `\|`).Replace(clip(s, 200))
	return "`" + s + "`"
}
