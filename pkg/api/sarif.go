package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
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
	return Endpoint{Name: "RecordSARIF", Roles: []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			raw, err := rawBody(req, MaxSARIFBody)
			if err != nil {
				return Reply{}, err
			}
			env, rep, err := readSARIFUpload(raw)
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

// readSARIFUpload reads a body: the envelope (status defaults to
// completed) and the log, in one pass (sarif.ReadBody). In the order of
// the contract, a body or log over a limit (413) or undecodable (400)
// answers before a wrong envelope (422), and a wrong envelope before a log
// that is not SARIF (422).
func readSARIFUpload(raw []byte) (scangate.NewScan, *sarif.Report, error) {
	rep := &sarif.Report{}
	body, readErr := sarif.ReadBody(raw, sarif.Limits{}, rep.Add)
	readErr = sarifError(readErr)
	var he *httpError
	if errors.As(readErr, &he) {
		return scangate.NewScan{}, nil, readErr
	}
	var p scangate.Problems
	f := readFields(body.Members, "", &p)
	env := readEnvelope(f, "completed")
	if body.Log {
		f.known[sarif.LogMember] = true
	} else {
		f.raw(sarif.LogMember, true, false, "a SARIF log (an object, or base64 of its gzip)")
	}
	f.done()
	if len(p) == 0 {
		env.ValidateEnvelope(&p)
	}
	if len(p) > 0 {
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
		var tools []sarif.Tool
		for _, run := range rep.Runs {
			if fs := run.Findings(t); len(fs) > 0 {
				ns.Findings = append(ns.Findings, fs...)
				if !slices.Contains(tools, run.Tool) {
					tools = append(tools, run.Tool)
				}
			}
		}
		if len(ns.Findings) == 0 {
			continue
		}
		details, err := withTools(env.OtherDetails, tools)
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

// withTools adds the tools that found a scan's findings to its
// other_details.
func withTools(details json.RawMessage, tools []sarif.Tool) (json.RawMessage, error) {
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
		list = append(list, tool{tl.Name, tl.Version})
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	obj["tools"] = b
	return json.Marshal(obj)
}
