// Package sarifout writes a SARIF 2.1.0 log of what scangate holds, one
// result at a time: GET /pr/{pr_id}/sarif streams a pull request's
// findings through it, so that no log, however large, is held whole.
// Every result is encoded with encoding/json; only the log's frame (the
// commas and brackets between runs and results) is written by hand.
package sarifout

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// SchemaURI is the log's $schema.
const SchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// Keys of partialFingerprints by the source of a finding's fingerprint:
// GitHub's line hash under its own key; the others under keys of
// scangate's, versioned as SARIF recommends.
var fingerprintKeys = map[string]string{
	scangate.FingerprintLineHash: "primaryLocationLineHash",
	scangate.FingerprintScanner:  "scangate/scanner/v1",
	scangate.FingerprintDerived:  "scangate/derived/v1",
}

// Run is one run of the log: a category of the pull request.
type Run struct {
	Category string
	Tool     Tool
	// Properties are the run's property bag (scangate's scan ids,
	// commit, baseline).
	Properties map[string]any
}

// Tool is the run's tool: the first tool of its scans, else scangate.
type Tool struct {
	Name, Version string
}

// Result is one finding.
type Result struct {
	Type          scangate.ScanType
	Name          string
	Aliases       []string
	Rule          string
	Path          string
	Line          *int64
	Severity      scangate.Severity
	Fingerprint   string
	FPSource      string
	BaselineState string // new, unchanged or absent; "" when not classified
	// InSource: suppressed in the scanner's source (SARIF's inSource).
	InSource bool
	// Suppressions are the allowlists that cover it.
	Suppressions []Suppression
	// Properties are further members of its property bag.
	Properties map[string]any
}

// Suppression is an allowlist that covers a result.
type Suppression struct {
	AllowlistID int64
	Reason      string // "" when the allowlist gives none
}

// Writer writes one log. Call Run, Result for each of its results, then
// Run again for the next, and Close; the first error stops every later
// call.
type Writer struct {
	w       io.Writer
	started bool
	inRun   bool
	results int // of the current run
	err     error
}

// New starts a log on w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) write(s string) {
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

func (w *Writer) writeJSON(v any) {
	if w.err != nil {
		return
	}
	b, err := scangate.PlainJSON(v)
	if err != nil {
		w.err = fmt.Errorf("encode sarif: %w", err)
		return
	}
	_, w.err = w.w.Write(b)
}

func (w *Writer) start() {
	if !w.started {
		w.started = true
		w.write(`{"$schema":"` + SchemaURI + `","version":"2.1.0","runs":[`)
	}
}

func (w *Writer) endRun() {
	if w.inRun {
		w.write("]}")
		w.inRun = false
	}
}

// runHead is what a run shows before its results.
type runHead struct {
	Tool              toolJSON          `json:"tool"`
	AutomationDetails automationDetails `json:"automationDetails"`
	ColumnKind        string            `json:"columnKind"`
	OriginalURIBaseID map[string]any    `json:"originalUriBaseIds"`
	Properties        map[string]any    `json:"properties,omitempty"`
}

type toolJSON struct {
	Driver driver `json:"driver"`
}

type driver struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type automationDetails struct {
	ID string `json:"id"`
}

// srcRoot is the base of every result's path: the repository's root.
const srcRoot = "%SRCROOT%"

// Run starts a run (ending the one before).
func (w *Writer) Run(r Run) error {
	w.start()
	if w.inRun {
		w.endRun()
		w.write(",")
	}
	head := runHead{Tool: toolJSON{Driver: driver{Name: r.Tool.Name, Version: r.Tool.Version}},
		AutomationDetails: automationDetails{ID: r.Category}, ColumnKind: "unicodeCodePoints",
		OriginalURIBaseID: map[string]any{srcRoot: map[string]any{"description": map[string]string{"text": "The root of the repository."}}},
		Properties:        r.Properties}
	b, err := scangate.PlainJSON(head)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("encode sarif run: %w", err)
	}
	// The head without its closing brace, then the results.
	w.write(strings.TrimSuffix(strings.TrimSpace(string(b)), "}") + `,"results":[`)
	w.inRun, w.results = true, 0
	return w.err
}

// resultJSON is a result as SARIF has it.
type resultJSON struct {
	RuleID              string            `json:"ruleId,omitempty"`
	Level               string            `json:"level"`
	Message             message           `json:"message"`
	Locations           []location        `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	BaselineState       string            `json:"baselineState,omitempty"`
	Suppressions        []suppressionJSON `json:"suppressions,omitempty"`
	Properties          map[string]any    `json:"properties"`
}

type message struct {
	Text string `json:"text"`
}

type location struct {
	PhysicalLocation physicalLocation `json:"physicalLocation"`
}

type physicalLocation struct {
	ArtifactLocation artifactLocation `json:"artifactLocation"`
	Region           *region          `json:"region,omitempty"`
}

type artifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type region struct {
	StartLine int64 `json:"startLine"`
}

type suppressionJSON struct {
	Kind          string         `json:"kind"`
	Status        string         `json:"status,omitempty"`
	Justification string         `json:"justification,omitempty"`
	Properties    map[string]any `json:"properties,omitempty"`
}

// ErrNoRun is the error of a result written before any run.
var ErrNoRun = errors.New("sarif: a result before its run")

// Result writes a result of the current run.
func (w *Writer) Result(r Result) error {
	if !w.inRun {
		return ErrNoRun
	}
	if w.results > 0 {
		w.write(",")
	}
	w.results++
	w.writeJSON(resultOf(r))
	return w.err
}

// Close ends the log; a log without runs has an empty list of them.
func (w *Writer) Close() error {
	w.start()
	w.endRun()
	w.write("]}")
	return w.err
}

// Level is the SARIF level of a severity: error for critical and high,
// warning for medium, note below.
func Level(s scangate.Severity) string {
	switch s {
	case scangate.SeverityCritical, scangate.SeverityHigh:
		return "error"
	case scangate.SeverityMedium:
		return "warning"
	}
	return "note"
}

func resultOf(r Result) resultJSON {
	out := resultJSON{RuleID: r.Rule, Level: Level(r.Severity), Message: message{Text: messageOf(r)}, BaselineState: r.BaselineState,
		Properties: map[string]any{"severity": string(r.Severity), "scan_type": string(r.Type), "name": r.Name}}
	if out.RuleID == "" {
		out.RuleID = r.Name
	}
	if len(r.Aliases) > 0 {
		out.Properties["aliases"] = r.Aliases
	}
	for k, v := range r.Properties {
		out.Properties[k] = v
	}
	if r.Path != "" {
		loc := location{PhysicalLocation: physicalLocation{ArtifactLocation: artifactLocation{URI: PathURI(r.Path), URIBaseID: srcRoot}}}
		if r.Line != nil && *r.Line >= 1 {
			loc.PhysicalLocation.Region = &region{StartLine: *r.Line}
		}
		out.Locations = []location{loc}
	}
	if k, ok := fingerprintKeys[r.FPSource]; ok && r.Fingerprint != "" {
		out.PartialFingerprints = map[string]string{k: r.Fingerprint}
		out.Properties["fingerprint_source"] = r.FPSource
	}
	if r.InSource {
		out.Suppressions = append(out.Suppressions, suppressionJSON{Kind: "inSource"})
	}
	for _, s := range r.Suppressions {
		j := suppressionJSON{Kind: "external", Status: "accepted", Justification: fmt.Sprintf("allowlist %d", s.AllowlistID),
			Properties: map[string]any{"allowlist_id": s.AllowlistID}}
		if s.Reason != "" {
			j.Justification = fmt.Sprintf("%s (allowlist %d)", s.Reason, s.AllowlistID)
			j.Properties["reason"] = s.Reason
		}
		out.Suppressions = append(out.Suppressions, j)
	}
	return out
}

// messageOf is a result's message: what it is, its name and aliases.
func messageOf(r Result) string {
	what := "Vulnerability"
	if r.Type == scangate.ScanSecret {
		what = "Secret"
	}
	text := what + " " + r.Name
	if len(r.Aliases) > 0 {
		text += " (also " + strings.Join(r.Aliases, ", ") + ")"
	}
	if r.Path != "" {
		text += " in " + r.Path
	}
	return text
}

// PathURI is a repository-relative path as a relative URI reference:
// each segment percent-encoded, a first segment with a colon preceded
// by "./" (so that it is not read as a scheme).
func PathURI(path string) string {
	return (&url.URL{Path: path}).String()
}
