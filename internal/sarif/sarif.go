// Package sarif reads the SARIF 2.1.0 logs that scanners write and maps their
// results to scangate findings, as docs/API.md ("Record scans from SARIF") and
// docs/DECISIONS.md ("One SARIF reader") define it.
//
// One reader serves every form a log arrives in: the body of POST
// /pr/scan/sarif with the log as an object or as base64 of its gzip
// (ReadBody), and an uploaded gzip (ReadGzip). It reads the bytes once,
// checking I-JSON (RFC 7493: UTF-8, no repeated member names, no lone
// surrogate escapes) as it decodes, refuses what breaks a limit before
// allocating it, and hands each run to the caller as soon as the run is
// read: of the runs before, it keeps only a de-duplication set of 16 bytes
// a finding. It hashes a secret's value as soon as it reads it: the value
// is never kept, logged or put in an error.
package sarif

import (
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scangate/scangate/internal/scangate"
)

// Limits bound what one log may hold. A field that is zero or negative takes
// its default (DefaultLimits).
type Limits struct {
	Bytes           int64 // the decompressed log: 100 MiB
	Runs            int   // runs in the log: 20
	ResultsPerRun   int   // results in one run: 25,000
	Results         int   // results in the whole log: 500,000 (every run full)
	FindingsPerType int   // findings of one scan type and category (one scan) in the whole log: 25,000
	RulesPerRun     int   // rules and tool extensions in one run: 100,000
	ValueBytes      int64 // one JSON value held at once (a result, a rule, a string): 8 MiB
}

// DefaultLimits are the limits of POST /pr/scan/sarif (docs/API.md, Limits).
func DefaultLimits() Limits {
	return Limits{
		Bytes:           100 << 20,
		Runs:            20,
		ResultsPerRun:   25000,
		Results:         20 * 25000,
		FindingsPerType: 25000,
		RulesPerRun:     100000,
		ValueBytes:      8 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	pick := func(v *int, dv int) {
		if *v <= 0 {
			*v = dv
		}
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.ValueBytes <= 0 {
		l.ValueBytes = d.ValueBytes
	}
	pick(&l.Runs, d.Runs)
	pick(&l.ResultsPerRun, d.ResultsPerRun)
	pick(&l.Results, d.Results)
	pick(&l.FindingsPerType, d.FindingsPerType)
	pick(&l.RulesPerRun, d.RulesPerRun)
	return l
}

// Options configure a read.
type Options struct {
	Limits Limits
	// Pointer is the JSON pointer of the log in what carried it ("" for a
	// log on its own). Errors point into the log below it.
	Pointer string
	// Category, when set, is every run's category (an upload's envelope
	// names one for the whole log): runs are then of one scan per type, de-duplicated and
	// limited together (FindingsPerType) as runs of one category are. Each
	// run's own category is still derived and checked.
	Category string
}

// Tool is the tool of a run: its driver's name and version.
type Tool struct {
	Name    string
	Version string // version, else semanticVersion; "" if neither
}

// Counts count the results of a run, or of a log.
type Counts struct {
	Results            int // every result
	Skipped            int // kind other than fail, or baselineState absent
	Recorded           int // findings made
	SuppressedInSource int // of those, suppressed in the log (never counted)
	Duplicates         int // results that an earlier result's finding already stands for
}

func (c *Counts) add(o Counts) {
	c.Results += o.Results
	c.Skipped += o.Skipped
	c.Recorded += o.Recorded
	c.SuppressedInSource += o.SuppressedInSource
	c.Duplicates += o.Duplicates
}

// Run is one run of a log, handed on as soon as it is read whole. A run is
// reported even when none of its results makes a finding.
type Run struct {
	Index int  // its place in the log's runs
	Tool  Tool // its tool
	// Type is the scan type of its tool: SECRET for a secret scanner
	// (gitleaks, ggshield, detect-secrets, trufflehog), else VULNERABILITY. A run may also make
	// findings of the other type (a rule tagged secret).
	Type scangate.ScanType
	// Category is its analysis category, as GitHub's code scanning has it: its
	// automationDetails.id up to the last "/", else its driver's name
	// lowercased; each with every run of characters outside A–Z a–z 0–9
	// . _ / - made one "-" (scangate.NormalizeCategory); "default" when
	// that leaves nothing.
	Category string
	// Secrets and Vulnerabilities are its findings of each type, in the
	// order of the run, each once: a result that repeats a finding of this
	// run, or of an earlier run of the same category, is a duplicate.
	Secrets, Vulnerabilities []scangate.Finding
	Counts
}

// Findings returns the run's findings of type t.
func (r *Run) Findings(t scangate.ScanType) []scangate.Finding {
	if t == scangate.ScanSecret {
		return r.Secrets
	}
	return r.Vulnerabilities
}

// Types lists the scan types the run records a scan of: its tool's type,
// whatever its findings (a clean run clears), then the other type when it
// made findings of it.
func (r *Run) Types() []scangate.ScanType {
	other := scangate.ScanSecret
	if r.Type == scangate.ScanSecret {
		other = scangate.ScanVulnerability
	}
	if len(r.Findings(other)) > 0 {
		return []scangate.ScanType{r.Type, other}
	}
	return []scangate.ScanType{r.Type}
}

// Handler receives each run of a log, in order, once it is read; an error
// stops the read and is returned. The run is the handler's to keep. A read
// that fails after some runs were handed on has handed them on: a caller
// that must not act on part of a log collects the runs first (Report).
type Handler func(*Run) error

// Report collects the runs of a log (its Add is a Handler), for a caller
// that acts on a log once it is read whole.
type Report struct {
	Runs []*Run
	Counts
}

// Add appends a run to the report.
func (rep *Report) Add(run *Run) error {
	rep.Runs = append(rep.Runs, run)
	rep.add(run.Counts)
	return nil
}

// Read reads a log from its JSON text and hands each run to h; it returns
// the counts of the whole log.
func Read(r io.Reader, o Options, h Handler) (Counts, error) {
	lim := o.Limits.withDefaults()
	src := &source{r: r, max: lim.Bytes, maxValue: lim.ValueBytes, pointer: o.Pointer}
	src.dec = jsontext.NewDecoder(src)
	d := &decoder{dec: src.dec, prefix: o.Pointer, noun: "the SARIF log"}
	rd := newReader(d, o.Pointer, o, h)
	if err := rd.read(); err != nil {
		var se *SchemaError
		if !errors.As(err, &se) {
			return rd.total, err
		}
		if end := d.end(); end != nil {
			return rd.total, end
		}
		return rd.total, err
	}
	return rd.total, d.end()
}

// ReadGzip reads a log from its gzip (an uploaded object). Anything after
// the gzip stream is refused, as anything after the log is.
func ReadGzip(r io.Reader, o Options, h Handler) (Counts, error) {
	zr, err := gzip.NewReader(tagged{r: r, detail: "is not valid gzip"})
	if err != nil {
		return Counts{}, tagError(err, "is not valid gzip")
	}
	return Read(tagged{r: zr, detail: "is not valid gzip"}, o, h)
}

// readBase64Gzip reads a log sent as GitHub's upload API takes it: the
// standard base64 of its gzip (line breaks ignored), as it decodes.
func readBase64Gzip(b io.Reader, o Options, h Handler) (Counts, error) {
	return ReadGzip(tagged{r: base64.NewDecoder(base64.StdEncoding, b), detail: "is not valid base64"}, o, h)
}

// LimitError reports a log that breaks one of the Limits (413).
type LimitError struct {
	Limit   string // bytes, runs, results_per_run, results, findings_per_type, rules_per_run, value_bytes
	Max     int64
	Pointer string // where the log broke it, when known
}

func (e *LimitError) Error() string {
	what := map[string]string{
		"bytes":             "bytes decompressed",
		"runs":              "runs",
		"results_per_run":   "results in one run",
		"results":           "results",
		"findings_per_type": "findings of one scan type and category",
		"rules_per_run":     "rules in one run",
		"value_bytes":       "bytes of one JSON value (or of whitespace) at once",
	}[e.Limit]
	s := fmt.Sprintf("the SARIF log holds more than %d %s (limit %s)", e.Max, what, e.Limit)
	if e.Pointer != "" {
		s += " at " + e.Pointer
	}
	return s
}

// InputError reports bytes that cannot be read: invalid base64, gzip or
// JSON, or JSON that is not I-JSON (400). Its Detail never quotes them.
type InputError struct {
	Detail string
	Err    error // the cause, for logs: it quotes no part of the input either
}

func (e *InputError) Error() string { return e.Detail }

func (e *InputError) Unwrap() error { return e.Err }

// SchemaError reports well-formed JSON that is not a SARIF 2.1.0 log this
// reader can record (422): Pointer locates the offending member.
type SchemaError struct {
	Pointer string
	Detail  string
}

func (e *SchemaError) Error() string { return e.Pointer + ": " + e.Detail }

// tagged reports the errors of the reader it wraps as an InputError.
type tagged struct {
	r      io.Reader
	detail string
}

func (t tagged) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = tagError(err, t.detail)
	}
	return n, err
}

func tagError(err error, detail string) error {
	var ie *InputError
	var le *LimitError
	if errors.As(err, &ie) || errors.As(err, &le) {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &InputError{Detail: "the SARIF log " + detail, Err: err}
}
