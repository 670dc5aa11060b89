package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/scangate/scangate/pkg/client"
)

const findingsAbout = `Lists findings: those of --scan, or of the pull request's newest scan of each
(scan type, category), which are what its gate judges. Only the findings that count
(not suppressed) unless --all; --all also shows the suppressed ones and the allowlists
that suppress them. A finding's name is what an allowlist names.

Each finding's BASELINE is new (the pull request adds it: its base branch's analysis has
no finding of that rule and fingerprint) or unchanged (already on the base branch); the
new ones are listed first. --baseline-state new lists only those the pull request adds.
`

// scanFindings is one scan with its findings.
type scanFindings struct {
	Scan     json.RawMessage   `json:"scan"`
	Findings []json.RawMessage `json:"findings"`
	scan     client.Scan
	findings []client.Finding
}

var findingsCommand = command{name: "findings", synopsis: "[flags]", about: findingsAbout, setup: (*app).findingsSetup}

func (a *app) findingsSetup(fs *flag.FlagSet, o *common) runFunc {
	var t target
	t.register(fs, false)
	scanID := fs.Int64("scan", 0, "the findings of this scan only")
	all := fs.Bool("all", false, "also the findings that are suppressed")
	state := fs.String("baseline-state", "", "only the findings of this state against the base branch: new (the pull request adds them) or unchanged")
	return func(ctx context.Context, c *client.Client, _ []string) error {
		if *state != "" && *state != "new" && *state != "unchanged" {
			return usagef("--baseline-state %q: it is new or unchanged", printable(*state))
		}
		scans, err := a.findingScans(ctx, c, t, *scanID)
		if err != nil {
			return err
		}
		return a.listFindings(ctx, c, *o, scans, client.FindingFilter{Unsuppressed: !*all, BaselineState: *state})
	}
}

// listFindings prints the findings of scans that f keeps.
func (a *app) listFindings(ctx context.Context, c *client.Client, o common, scans []client.Scan, f client.FindingFilter) error {
	out := make([]scanFindings, 0, len(scans))
	for _, s := range scans {
		fs, err := c.Findings(ctx, s.ID, f)
		if err != nil {
			return err
		}
		sf := scanFindings{Scan: s.JSON, Findings: []json.RawMessage{}, scan: s, findings: fs}
		for _, f := range fs {
			sf.Findings = append(sf.Findings, f.JSON)
		}
		out = append(out, sf)
	}
	if o.json {
		return writeJSON(a.stdout, map[string]any{"scans": out})
	}
	return printFindings(a.stdout, out)
}

// findingScans are the scans whose findings are listed: --scan, or the
// pull request's newest of each (scan type, category).
func (a *app) findingScans(ctx context.Context, c *client.Client, t target, scanID int64) ([]client.Scan, error) {
	if scanID > 0 {
		s, err := c.Scan(ctx, scanID)
		return []client.Scan{s}, err
	}
	p, err := a.resolve(t)
	if err != nil {
		return nil, err
	}
	id, err := prID(ctx, c, t, p)
	if err != nil {
		return nil, err
	}
	scans, err := c.PRScans(ctx, id)
	if err != nil {
		return nil, err
	}
	return newest(scans), nil
}

// newest keeps the first scan (newest first) of each (scan type, category).
func newest(scans []client.Scan) []client.Scan {
	seen := map[string]bool{}
	var out []client.Scan
	for _, s := range scans {
		k := s.ScanType + "\x00" + s.Category()
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// printFindings writes the findings of scans as one table, those the pull
// request adds (new) first, each group in the scans' order.
func printFindings(w io.Writer, out []scanFindings) error {
	var ordered []scanFindings
	n := 0
	for _, first := range []bool{true, false} {
		for _, sf := range out {
			var fs []client.Finding
			for _, f := range sf.findings {
				if isNew(f) == first {
					fs = append(fs, f)
				}
			}
			n += len(fs)
			ordered = append(ordered, scanFindings{scan: sf.scan, findings: fs})
		}
	}
	if err := writeFindings(w, ordered, true); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s in %s\n", count(n, "finding", "findings"), count(len(out), "scan", "scans"))
	return nil
}

// writeFindings writes one table row per finding, in the given order; triage
// adds the baseline state and what suppresses each (printNew's findings are
// all new and unsuppressed, so it leaves both out).
func writeFindings(w io.Writer, out []scanFindings, triage bool) error {
	header := []string{"SCAN", "TYPE", "CATEGORY", "BASELINE", "SEVERITY", "NAME", "RULE", "LOCATION", "SUPPRESSED BY"}
	if !triage {
		header = []string{"SCAN", "TYPE", "CATEGORY", "SEVERITY", "NAME", "RULE", "LOCATION"}
	}
	t := newTable(w, header...)
	for _, sf := range out {
		for _, f := range sf.findings {
			if triage {
				t.row(itoa(sf.scan.ID), sf.scan.ScanType, orDash(sf.scan.Category()), orDash(deref(f.BaselineState)), orDash(f.Severity), f.Name,
					orDash(deref(f.Rule)), location(f), suppressedBy(f))
				continue
			}
			t.row(itoa(sf.scan.ID), sf.scan.ScanType, orDash(sf.scan.Category()), orDash(f.Severity), f.Name, orDash(deref(f.Rule)), location(f))
		}
	}
	return t.flush()
}

func isNew(f client.Finding) bool { return deref(f.BaselineState) == "new" }

// newFindings are the unsuppressed findings that the pull request adds
// (baseline state new) in the newest scans its gate judges; a category
// with none is not read.
func newFindings(ctx context.Context, c *client.Client, g client.Gate) ([]scanFindings, error) {
	var out []scanFindings
	for _, cat := range g.Categories {
		if cat.NewCount == 0 {
			continue
		}
		fs, err := c.Findings(ctx, cat.ScanID, client.FindingFilter{Unsuppressed: true, BaselineState: "new"})
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			continue
		}
		details, _ := json.Marshal(map[string]string{"category": cat.Category})
		out = append(out, scanFindings{scan: client.Scan{ID: cat.ScanID, ScanType: cat.ScanType, OtherDetails: details}, findings: fs})
	}
	return out, nil
}

// findingsJSON is the service's JSON of the findings, each with its scan's
// id, type and category.
func findingsJSON(out []scanFindings) []map[string]any {
	items := []map[string]any{}
	for _, sf := range out {
		for _, f := range sf.findings {
			items = append(items, map[string]any{"scan_id": sf.scan.ID, "scan_type": sf.scan.ScanType, "category": sf.scan.Category(), "finding": f.JSON})
		}
	}
	return items
}

// printNew writes the findings a pull request adds, before its gate, and
// what each category was compared with.
func printNew(w io.Writer, g client.Gate, added []scanFindings) error {
	n := 0
	for _, sf := range added {
		n += len(sf.findings)
	}
	base := "its base branch"
	if g.BaseRef != nil {
		base = printable(*g.BaseRef)
	}
	fmt.Fprintf(w, "new in this pull request (not on %s): %s\n", base, count(n, "finding", "findings"))
	if n > 0 {
		if err := writeFindings(w, added, false); err != nil {
			return err
		}
	}
	for _, cat := range g.Categories {
		if cat.Baseline == nil {
			fmt.Fprintf(w, "  %s %s: no baseline (no analysis of %s): every finding is new\n", printable(cat.ScanType), printable(orDash(cat.Category)), base)
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// location is path:line, or what of them is known.
func location(f client.Finding) string {
	loc := deref(f.Path)
	if f.Line != nil {
		loc += fmt.Sprintf(":%d", *f.Line)
	}
	return orDash(loc)
}

// suppressedBy names the allowlists that suppress a finding ("source" for
// a suppression in the scanner's source).
func suppressedBy(f client.Finding) string {
	if !f.Suppressed {
		return "-"
	}
	if len(f.SuppressedBy) == 0 {
		return "source"
	}
	ids := make([]string, len(f.SuppressedBy))
	for i, id := range f.SuppressedBy {
		ids[i] = itoa(id)
	}
	return "allowlist " + strings.Join(ids, ",")
}
