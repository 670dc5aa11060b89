// Package sarif reads the SARIF 2.1.0 logs that scanners write and maps their
// results to scangate findings, as docs/API.md ("Record scans from SARIF") defines it. It
// streams the log, enforces its limits before allocating what they forbid, and
// hashes a secret's value as soon as it reads it: the value is never kept,
// logged or put in an error.
package sarif

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/scangate/scangate/pkg/scangate"
)

// Limits bound what one log may hold. A field that is zero or negative takes
// its default (DefaultLimits).
type Limits struct {
	Bytes           int64 // the decompressed log: 100 MiB
	Runs            int   // runs in the log: 20
	ResultsPerRun   int   // results in one run: 25,000
	Results         int   // results in the whole log: 500,000 (every run full)
	FindingsPerType int   // findings recorded for one scan type (one scan): 25,000
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
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.Runs <= 0 {
		l.Runs = d.Runs
	}
	if l.ResultsPerRun <= 0 {
		l.ResultsPerRun = d.ResultsPerRun
	}
	if l.Results <= 0 {
		l.Results = d.Results
	}
	if l.FindingsPerType <= 0 {
		l.FindingsPerType = d.FindingsPerType
	}
	if l.RulesPerRun <= 0 {
		l.RulesPerRun = d.RulesPerRun
	}
	if l.ValueBytes <= 0 {
		l.ValueBytes = d.ValueBytes
	}
	return l
}

// Options configure a read.
type Options struct {
	Limits Limits
	// Pointer is the JSON pointer of the log in the request that carried it
	// ("/sarif" in the body of POST /pr/scan/sarif; "" for a log on its own).
	// Errors point into the log below it.
	Pointer string
}

// Finding is one finding to record, mapped from one or more SARIF results.
type Finding struct {
	Type    scangate.ScanType
	Name    string   // what allowlists match: sha256:, ggshield:, loc:, an advisory id or a rule id
	Aliases []string // other advisory ids of a VULNERABILITY finding
	Rule    string
	Path    string // repository-relative; "" when the result has no location
	Line    *int64 // nil when the result has no start line
	// SuppressedInSource is set when every result recorded as this finding
	// was suppressed in the log (a suppression whose status is absent or
	// accepted): such a finding is recorded but never counted.
	SuppressedInSource bool
}

// Tool is the tool of one run (tool.driver).
type Tool struct {
	Name    string
	Version string // version, else semanticVersion; "" if neither
	// Types lists the scan types of the results it reported that were not
	// skipped, in the order SECRET, VULNERABILITY.
	Types []scangate.ScanType
}

// Report is what a log records.
type Report struct {
	Findings []Finding // in the order of the log, duplicates once
	Tools    []Tool    // one per distinct name and version, in the order of the runs

	Results            int // every result of every run
	Skipped            int // kind other than fail, or baselineState absent
	Recorded           int // len(Findings)
	SuppressedInSource int // findings recorded with SuppressedInSource
	Duplicates         int // results recorded as a finding that an earlier result already made
}

// Read reads a SARIF log from its JSON text.
func Read(r io.Reader, o Options) (*Report, error) {
	return read(r, o)
}

// ReadGzip reads a SARIF log from its gzip (an uploaded object, issue 15).
func ReadGzip(r io.Reader, o Options) (*Report, error) {
	zr, err := gzip.NewReader(tagged{r: r, detail: "is not valid gzip"})
	if err != nil {
		return nil, tagError(err, "is not valid gzip")
	}
	return read(tagged{r: zr, detail: "is not valid gzip"}, o)
}

// ReadBase64Gzip reads a SARIF log sent as GitHub's upload API takes it: a
// string of the standard base64 of its gzip (line breaks ignored). A gzip
// whose trailer says it inflates past Limits.Bytes is refused before any of
// it is inflated; one whose trailer lies is refused as it inflates.
func ReadBase64Gzip(s string, o Options) (*Report, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, &InputError{Detail: "the SARIF log is not valid base64", Err: err}
	}
	if n, max := len(b), o.Limits.withDefaults().Bytes; n >= 18 && b[0] == 0x1f && b[1] == 0x8b &&
		int64(binary.LittleEndian.Uint32(b[n-4:])) > max {
		return nil, &LimitError{Limit: "bytes", Max: max, Pointer: o.Pointer}
	}
	return ReadGzip(bytes.NewReader(b), o)
}

// ReadMember reads the sarif member of a request body as it was sent: a JSON
// object (the log) or a JSON string (base64 of its gzip).
func ReadMember(raw json.RawMessage, o Options) (*Report, error) {
	b := bytes.TrimLeft(raw, " \t\r\n")
	switch {
	case len(b) > 0 && b[0] == '{':
		return Read(bytes.NewReader(b), o)
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, &InputError{Detail: "the SARIF string is not valid JSON", Err: err}
		}
		return ReadBase64Gzip(s, o)
	}
	return nil, &SchemaError{Pointer: o.Pointer, Detail: "must be a SARIF log: a JSON object, or a string of base64 of its gzip"}
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
		"findings_per_type": "findings of one scan type",
		"rules_per_run":     "rules in one run",
		"value_bytes":       "bytes of one JSON value (or of whitespace) at once",
	}[e.Limit]
	s := fmt.Sprintf("the SARIF log holds more than %d %s (limit %s)", e.Max, what, e.Limit)
	if e.Pointer != "" {
		s += " at " + e.Pointer
	}
	return s
}

// InputError reports a log that cannot be read: invalid base64, gzip, JSON
// or UTF-8 (400). Its Detail never quotes the log.
type InputError struct {
	Detail string
	Err    error // the cause, for logs: it quotes no part of the log either
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
