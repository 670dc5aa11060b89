package sarif

import (
	"io"
	"slices"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// finding is a finding with its scan type, as the tests compare them.
type finding struct {
	Type               scangate.ScanType
	Name               string
	Aliases            []string
	Rule               string
	Path               string
	Line               *int64
	SuppressedInSource bool
}

// collected reads with read and collects the report, checking that the
// counts read returns are the sum of its runs'.
func collected(read func(Handler) (Counts, error)) (*Report, error) {
	rep := &Report{}
	c, err := read(rep.Add)
	if err == nil && c != rep.Counts {
		panic("the counts of the log are not the sum of its runs'")
	}
	return rep, err
}

func readLog(r io.Reader, o Options) (*Report, error) {
	return collected(func(h Handler) (Counts, error) { return Read(r, o, h) })
}

func readGzip(r io.Reader, o Options) (*Report, error) {
	return collected(func(h Handler) (Counts, error) { return ReadGzip(r, o, h) })
}

func readB64(s string, o Options) (*Report, error) {
	return collected(func(h Handler) (Counts, error) { return readBase64Gzip(strings.NewReader(s), o, h) })
}

// flat lists a report's findings: run by run, each run's SECRET findings
// then its VULNERABILITY ones, each in the order of the log.
func flat(rep *Report) []finding {
	var out []finding
	for _, run := range rep.Runs {
		for _, t := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
			for _, f := range run.Findings(t) {
				out = append(out, finding{Type: t, Name: f.Name, Aliases: f.Aliases, Rule: f.Rule, Path: f.Path, Line: f.Line, SuppressedInSource: f.InSource})
			}
		}
	}
	return out
}

// toolTypes is a tool with the scan types its runs found.
type toolTypes struct {
	Name, Version string
	Types         []scangate.ScanType
}

// tools lists a report's distinct tools (by name and version) in the order
// of their runs, each with the scan types of its findings.
func tools(rep *Report) []toolTypes {
	var out []toolTypes
	for _, run := range rep.Runs {
		i := slices.IndexFunc(out, func(t toolTypes) bool { return t.Name == run.Tool.Name && t.Version == run.Tool.Version })
		if i < 0 {
			out = append(out, toolTypes{Name: run.Tool.Name, Version: run.Tool.Version})
			i = len(out) - 1
		}
		for _, t := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
			if len(run.Findings(t)) > 0 && !slices.Contains(out[i].Types, t) {
				out[i].Types = append(out[i].Types, t)
			}
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Types, func(a, b scangate.ScanType) int { return strings.Compare(string(a), string(b)) })
	}
	return out
}
