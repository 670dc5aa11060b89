package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/scangate/scangate/pkg/client"
)

// writeJSON writes v as one JSON document on its own line, with what
// would act on a terminal escaped (client.PrintableJSON).
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", client.PrintableJSON(b))
	return err
}

// printable is text of the service as it may be printed (client.Printable).
func printable(s string) string { return client.Printable(s) }

// count is n with its noun: "1 secret", "2 secrets".
func count[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// table writes rows of tab-separated cells in aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) table {
	t := table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

// row writes one row; each cell is made printable (a tab or a new line
// of the service's text would break the table, and worse).
func (t table) row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = printable(c)
	}
	fmt.Fprintln(t.tw, strings.Join(safe, "\t"))
}

func (t table) flush() error { return t.tw.Flush() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// orDash shows an absent value as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// printGate writes a gate for people: the decision, the newest scan of
// each category, and the reasons it blocks, per category.
func printGate(w io.Writer, label string, g client.Gate) error {
	verdict := "not blocked"
	if g.Blocked {
		verdict = "BLOCKED"
	}
	head := ""
	if g.HeadSHA != nil && *g.HeadSHA != "" {
		head = ", head " + printable(short(*g.HeadSHA))
	}
	if g.BaseRef != nil && *g.BaseRef != "" {
		head += ", base " + printable(*g.BaseRef)
	}
	fmt.Fprintf(w, "%s: %s (gate of pull request %d%s, evaluated %s)\n", printable(label), verdict, g.PRID, head, printable(g.EvaluatedAt))
	if len(g.Categories) > 0 {
		t := newTable(w, "TYPE", "CATEGORY", "SCAN", "STATUS", "SECRETS", "VULNERABILITIES", "BLOCKS", "NEW", "UNCHANGED", "FIXED", "BASELINE")
		for _, c := range g.Categories {
			t.row(c.ScanType, orDash(c.Category), itoa(c.ScanID), c.Status, itoa(c.SecretCount), itoa(c.VulnerabilityCount), yesNo(c.BlockStatus),
				itoa(c.NewCount), itoa(c.UnchangedCount), itoa(c.AbsentCount), baseline(c.Baseline))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(g.Reasons) > 0 {
		fmt.Fprintln(w, "blocked by:")
	}
	for _, r := range g.Reasons {
		fmt.Fprintf(w, "  %s %s: %s\n", printable(r.ScanType), printable(orDash(r.Category)), reason(r))
	}
	return nil
}

// baseline names the base branch's analysis a scan was compared with.
func baseline(b *client.Baseline) string {
	if b == nil {
		return "none"
	}
	at := ""
	if b.CommitSHA != nil {
		at = " at " + short(*b.CommitSHA)
	}
	return fmt.Sprintf("scan %d%s (%s)", b.ScanID, at, b.Match)
}

// reason says one reason in words; a findings reason says how many of
// its findings are new, as the service counted them.
func reason(r client.GateReason) string {
	scan := ""
	if r.ScanID != nil {
		scan = fmt.Sprintf("scan %d", *r.ScanID)
	}
	switch r.Kind {
	case "findings":
		what := fmt.Sprintf("%s at or above the policy's severity (%d new)", count(r.Count, "unsuppressed finding", "unsuppressed findings"), r.NewCount)
		if scan == "" {
			return what
		}
		return scan + ": " + what
	case "pending":
		return strings.TrimSpace(scan + " is not processed yet")
	case "failed":
		return strings.TrimSpace(scan + " failed")
	case "missing":
		return "no scan, and the policy requires one"
	}
	return strings.TrimSpace(scan + " " + printable(r.Kind))
}

// short is the first 12 characters of a commit hash.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
