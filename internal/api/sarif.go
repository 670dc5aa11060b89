package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scangate/scangate/internal/sarif"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/usecase"
)

// MaxSARIFBody is the body limit of POST /pr/scan/sarif: Lambda's
// synchronous payload limit.
const MaxSARIFBody = 6_000_000

// uploadBody is the answer of a SARIF upload (usecase.Recorded).
type uploadBody struct {
	Scans              []scangate.ScanView `json:"scans"`
	Results            int                 `json:"results"`
	Recorded           int                 `json:"recorded"`
	SuppressedInSource int                 `json:"suppressed_in_source"`
	Skipped            int                 `json:"skipped"`
}

// RecordSARIF is POST /pr/scan/sarif: a scanner's SARIF log, unchanged, in
// the envelope of POST /pr/scan; one scan per (scan type, category). The
// body is read twice (usecase.RecordLog): to check it whole, then to record its
// runs as they are read.
func RecordSARIF(st ScanStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RecordSARIF", Roles: recordRoles, Users: st, ScanScope: true, RepoScope: true, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			raw, err := rawBody(req, MaxSARIFBody)
			if err != nil {
				return Reply{}, err
			}
			o := sarif.Options{Category: bodyCategory(raw)}
			read := func(h sarif.Handler) (scangate.NewScan, sarif.Counts, error) {
				ns, counts, err := readSARIFUpload(raw, o, h)
				if err == nil {
					err = mayRecord(c, ns.VcID, ns.RepoID)
				}
				return ns, counts, err
			}
			// The recording stops short of the function's time limit, so
			// that what it wrote is deleted before the function ends.
			work := ctx
			if d, ok := ctx.Deadline(); ok {
				var cancel context.CancelFunc
				work, cancel = context.WithDeadline(ctx, d.Add(-abortMargin))
				defer cancel()
			}
			out, err := usecase.RecordLog(work, st, read, usecase.Recording{Who: whoOf(c, req), At: now()})
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Body: uploadBody(out)}, nil
		}}
}

// abortMargin is kept, of an inline recording's time, to delete what it
// wrote when it fails (the store gives that 5 s at most).
const abortMargin = 5 * time.Second

// bodyCategory is the category member of a body when it is a category
// (the envelope's: every run's), else "": the first read of the body then
// refuses the member, or there is none.
func bodyCategory(raw []byte) string {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() != "category" {
			if dec.SkipValue() != nil {
				return ""
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil || v.Kind() != '"' || !scangate.ValidCategory(v.String()) {
			return ""
		}
		return v.String()
	}
	return ""
}

// readSARIFUpload reads a body: the envelope (status defaults to
// completed) and the log, in one pass (sarif.ReadBody), its runs handed
// to h. In the order of the contract, a body or log over a limit (413) or
// undecodable (400) answers before a wrong envelope (422), and a wrong
// envelope before a log that is not SARIF (422).
func readSARIFUpload(raw []byte, o sarif.Options, h sarif.Handler) (scangate.NewScan, sarif.Counts, error) {
	body, readErr := sarif.ReadBody(raw, o, h)
	readErr = usecase.SARIFError(readErr)
	if k := scangate.KindOf(readErr); k == scangate.KindTooLarge || k == scangate.KindMalformed {
		return scangate.NewScan{}, body.Counts, readErr
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
		return env, body.Counts, p.Err()
	}
	return env, body.Counts, readErr
}
