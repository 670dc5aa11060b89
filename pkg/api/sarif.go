package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/sarif"
	"github.com/scangate/scangate/pkg/scangate"
)

// MaxSARIFBody is the body limit of POST /pr/scan/sarif: Lambda's
// synchronous payload limit.
const MaxSARIFBody = 6_000_000

// uploadBody is the answer of a SARIF upload.
type uploadBody struct {
	Scans              []scanBody `json:"scans"`
	Results            int        `json:"results"`
	Recorded           int        `json:"recorded"`
	SuppressedInSource int        `json:"suppressed_in_source"`
	Skipped            int        `json:"skipped"`
}

// RecordSARIF is POST /pr/scan/sarif: a scanner's SARIF log, unchanged, in
// the envelope of POST /pr/scan; one scan per scan type present.
func RecordSARIF(st ScanStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RecordSARIF", Roles: []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}, Users: st, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := bodyUpTo(req, MaxSARIFBody)
			if err != nil {
				return Reply{}, err
			}
			env, rep, err := readSARIFUpload(m, sarif.Options{Pointer: "/sarif"})
			if err != nil {
				return Reply{}, err
			}
			out, err := RecordReport(ctx, st, env, rep, now())
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Body: out}, nil
		}}
}

// readSARIFUpload reads the envelope (status defaults to completed) and
// the log of an upload. In the order of the contract, a log over a limit
// (413) or undecodable (400) answers before a wrong envelope (422).
func readSARIFUpload(m members, o sarif.Options) (scangate.NewScan, *sarif.Report, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	env := readEnvelope(f, "completed")
	raw, ok := f.raw("sarif", true, false, "a SARIF log (an object, or base64 of its gzip)")
	f.done()
	if len(p) == 0 {
		env.ValidateEnvelope(&p)
	}
	var rep *sarif.Report
	var readErr error
	if ok {
		rep, readErr = sarif.ReadMember(raw, o)
		readErr = sarifError(readErr)
	}
	var he *httpError
	switch {
	case errors.As(readErr, &he):
		return env, nil, readErr
	case len(p) > 0:
		return env, nil, p.Err()
	}
	return env, rep, readErr
}

// sarifError gives a reading error of a log its status: a breached limit
// 413, undecodable input 400, a log that is not SARIF 2.1.0 422.
func sarifError(err error) error {
	if err == nil {
		return nil
	}
	var le *sarif.LimitError
	var ie *sarif.InputError
	var se *sarif.SchemaError
	switch {
	case errors.As(err, &le):
		return failf(http.StatusRequestEntityTooLarge, "%s", le.Error())
	case errors.As(err, &ie):
		return failf(http.StatusBadRequest, "%s", ie.Error())
	case errors.As(err, &se):
		return &scangate.Error{Kind: scangate.KindInvalid, Detail: "the SARIF log is not SARIF 2.1.0 as scangate reads it",
			Fields: []scangate.FieldError{{Pointer: se.Pointer, Detail: se.Detail}}}
	}
	return err
}

// RecordReport records one scan per scan type of a read log, in the
// envelope env, exactly as POST /pr/scan records a scan; the tools that
// found each type go into its other_details.tools.
func RecordReport(ctx context.Context, st ScanStore, env scangate.NewScan, rep *sarif.Report, at time.Time) (uploadBody, error) {
	return recordReport(ctx, func(ctx context.Context, ns scangate.NewScan) (scangate.Scan, scangate.PR, error) {
		return st.RecordScan(ctx, ns, at)
	}, env, rep)
}

// OnceStore records a scan once per key whatever the deliveries.
type OnceStore interface {
	RecordScanOnce(ctx context.Context, ns scangate.NewScan, now time.Time, once string) (scangate.Scan, scangate.PR, bool, error)
}

// RecordReportOnce is RecordReport for work that may be delivered more
// than once (an S3 event): each type's scan is recorded with
// RecordScanOnce under the key once#<type>, so that a redelivery records
// nothing twice and answers with the scans the first recorded.
func RecordReportOnce(ctx context.Context, st OnceStore, once string, env scangate.NewScan, rep *sarif.Report, at time.Time) (uploadBody, error) {
	return recordReport(ctx, func(ctx context.Context, ns scangate.NewScan) (scangate.Scan, scangate.PR, error) {
		sc, pr, _, err := st.RecordScanOnce(ctx, ns, at, once+"#"+string(ns.Type))
		return sc, pr, err
	}, env, rep)
}

// recordReport records one scan per scan type of rep with record.
func recordReport(ctx context.Context, record func(context.Context, scangate.NewScan) (scangate.Scan, scangate.PR, error),
	env scangate.NewScan, rep *sarif.Report) (uploadBody, error) {
	out := uploadBody{Scans: []scanBody{}, Results: rep.Results, Recorded: rep.Recorded,
		SuppressedInSource: rep.SuppressedInSource, Skipped: rep.Skipped}
	for _, t := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
		ns := env
		ns.Type, ns.Findings = t, nil
		for _, f := range rep.Findings {
			if f.Type == t {
				ns.Findings = append(ns.Findings, scangate.Finding{Name: f.Name, Aliases: f.Aliases, Rule: f.Rule,
					Path: f.Path, Line: f.Line, InSource: f.SuppressedInSource})
			}
		}
		if len(ns.Findings) == 0 {
			continue
		}
		details, err := withTools(env.OtherDetails, rep.Tools, t)
		if err != nil {
			return out, err
		}
		ns.OtherDetails = details
		sc, pr, err := record(ctx, ns)
		if err != nil {
			return out, err
		}
		out.Scans = append(out.Scans, scanJSON(sc, pr))
	}
	return out, nil
}

// withTools adds the tools that found findings of type t to other_details.
func withTools(details json.RawMessage, tools []sarif.Tool, t scangate.ScanType) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(details) > 0 {
		if err := json.Unmarshal(details, &obj); err != nil {
			return nil, err
		}
	}
	type tool struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	list := []tool{}
	for _, tl := range tools {
		for _, tt := range tl.Types {
			if tt == t {
				list = append(list, tool{tl.Name, tl.Version})
				break
			}
		}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	obj["tools"] = b
	return json.Marshal(obj)
}
