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
	return func(ctx context.Context, c *client.Client, _ []string) error {
		scans, err := a.findingScans(ctx, c, t, *scanID)
		if err != nil {
			return err
		}
		return a.listFindings(ctx, c, *o, scans, *all)
	}
}

// listFindings prints the findings of scans.
func (a *app) listFindings(ctx context.Context, c *client.Client, o common, scans []client.Scan, all bool) error {
	out := make([]scanFindings, 0, len(scans))
	for _, s := range scans {
		fs, err := c.Findings(ctx, s.ID, !all)
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

func printFindings(w io.Writer, out []scanFindings) error {
	t := newTable(w, "SCAN", "TYPE", "CATEGORY", "SEVERITY", "NAME", "RULE", "LOCATION", "SUPPRESSED BY")
	n := 0
	for _, sf := range out {
		for _, f := range sf.findings {
			n++
			t.row(itoa(sf.scan.ID), sf.scan.ScanType, orDash(sf.scan.Category()), orDash(f.Severity), f.Name,
				orDash(deref(f.Rule)), location(f), suppressedBy(f))
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s in %s\n", count(n, "finding", "findings"), count(len(out), "scan", "scans"))
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
