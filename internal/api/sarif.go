package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scangate/scangate/internal/sarif"
	"github.com/scangate/scangate/internal/scangate"
)

// MaxSARIFBody is the body limit of POST /pr/scan/sarif: Lambda's
// synchronous payload limit.
const MaxSARIFBody = 6_000_000

// uploadBody is the answer of a SARIF upload.
type uploadBody struct {
	Scans              []scangate.ScanView `json:"scans"`
	Results            int                 `json:"results"`
	Recorded           int                 `json:"recorded"`
	SuppressedInSource int                 `json:"suppressed_in_source"`
	Skipped            int                 `json:"skipped"`
}

// RecordSARIF is POST /pr/scan/sarif: a scanner's SARIF log, unchanged, in
// the envelope of POST /pr/scan; one scan per (scan type, category). The
// body is read twice (RecordLog): to check it whole, then to record its
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
			out, err := RecordLog(work, st, read, Recording{Who: whoOf(c, req), At: now()})
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Body: out}, nil
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
	readErr = sarifError(readErr)
	var he *httpError
	if errors.As(readErr, &he) {
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

// Recording is how a read log is recorded: by whom (its audit entries),
// when, and at most once per key Once (an S3 event's redeliveries: "" for
// none). Check, when set, runs once the log is read whole and before
// anything is written (the ingest checks its upload's creator there).
type Recording struct {
	Who   scangate.Who
	At    time.Time
	Once  string
	Check func(context.Context) error
}

// A LogReader reads a log, handing each of its runs to h as it is read
// (with every run's category the envelope's, when it names one), and
// returns the envelope of its scans and the log's counts; its errors are
// those the API answers (SARIFError). RecordLog reads it twice.
type LogReader func(h sarif.Handler) (scangate.NewScan, sarif.Counts, error)

// errLogChanged reports a log that read otherwise the second time (an
// object replaced between the reads): nothing is recorded, and a retry
// reads it again.
var errLogChanged = errors.New("the SARIF log read differently the second time")

// RecordLog records the scans of a log in its envelope, exactly as POST
// /pr/scan records a scan: one scan per (scan type, category), for every
// run of the log (a run that found nothing records a completed scan with
// no finding: a clean re-scan clears its category), with the tools of
// each scan in its other_details.tools. A run's category is its own
// unless the envelope names one for every run.
//
// It reads the log twice, keeping no finding: first whole, to refuse it
// (413, 400, 422) before anything is written and to learn its scans and
// their tools; then to write each run's findings as soon as the run is
// read (store's RecordScansFrom), while the next run is read. The scans
// and the PR record are committed after the last run, in one commit.
func RecordLog(ctx context.Context, st ScanStore, read LogReader, r Recording) (uploadBody, error) {
	plan := &logPlan{at: map[string]int{}, occ: scangate.NewOccurrences()}
	env, counts, err := read(plan.add)
	out := uploadBody{Scans: []scangate.ScanView{}, Results: counts.Results, Skipped: counts.Skipped,
		Recorded: counts.Recorded, SuppressedInSource: counts.SuppressedInSource}
	if err == nil && r.Check != nil {
		err = r.Check(ctx)
	}
	if err != nil {
		return out, err
	}
	nss, err := plan.newScans(env)
	if err != nil {
		return out, err
	}
	plan.occ.Seal()
	recorded, pr, _, err := st.RecordScansFrom(ctx, nss, r.Who, r.At, r.Once, func(add func(int, []scangate.Finding) error) error {
		return plan.record(read, counts, add)
	})
	if err != nil {
		return out, err
	}
	for _, sc := range recorded {
		out.Scans = append(out.Scans, scangate.ViewScan(sc, pr))
	}
	return out, nil
}

// logPlan is what the first read of a log finds: its scans, one per
// (type, category) in the order its runs name them, with their tools.
type logPlan struct {
	scans []planScan
	at    map[string]int // a scan's index, by type#category
	// occ numbers the derived fingerprints of each scan: noted by the
	// first read, suffixed by the second.
	occ *scangate.Occurrences
}

type planScan struct {
	typ      scangate.ScanType
	category string
	tools    []sarif.Tool
}

// add notes the scans of a run (a Handler).
func (p *logPlan) add(run *sarif.Run) error {
	for _, t := range run.Types() {
		k := string(t) + "#" + run.Category
		i, ok := p.at[k]
		if !ok {
			i = len(p.scans)
			p.at[k] = i
			p.scans = append(p.scans, planScan{typ: t, category: run.Category})
		}
		if sc := &p.scans[i]; !slices.Contains(sc.tools, run.Tool) {
			sc.tools = append(sc.tools, run.Tool)
		}
		fs := run.Findings(t)
		for k := range fs {
			p.occ.Note(i, &fs[k])
		}
	}
	return nil
}

// newScans are the plan's scans in the envelope env, without findings.
func (p *logPlan) newScans(env scangate.NewScan) ([]scangate.NewScan, error) {
	nss := make([]scangate.NewScan, len(p.scans))
	for i, sc := range p.scans {
		ns := env
		ns.Type, ns.Category, ns.Findings = sc.typ, sc.category, nil
		var err error
		if ns.OtherDetails, err = withTools(env.OtherDetails, sc.tools); err != nil {
			return nil, err
		}
		nss[i] = ns
	}
	return nss, nil
}

// runsInFlight is how many runs of a log are written at once while the
// next is read: runs of different scans are written to different
// partitions, which DynamoDB takes at once (one partition takes about
// 1,000 writes a second).
const runsInFlight = 4

// record reads the log again and hands each run's findings to add (its
// scan's next part) from runsInFlight goroutines, so that the next run is
// read while runs are written. A run that the first read did not find,
// or counts that differ, fail the recording (errLogChanged).
func (p *logPlan) record(read LogReader, counts sarif.Counts, add func(int, []scangate.Finding) error) error {
	runs := make(chan *sarif.Run)
	stopped := make(chan struct{})
	var mu sync.Mutex
	var werr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = err
			close(stopped)
		}
	}
	var wg sync.WaitGroup
	for range runsInFlight {
		wg.Go(func() {
			for run := range runs {
				for _, t := range run.Types() {
					i, ok := p.at[string(t)+"#"+run.Category]
					err := errLogChanged
					if ok {
						fs := run.Findings(t)
						for k := range fs {
							p.occ.Suffix(i, &fs[k])
						}
						err = add(i, fs)
					}
					if err != nil {
						fail(err)
						break
					}
				}
			}
		})
	}
	_, again, err := read(func(run *sarif.Run) error {
		select {
		case runs <- run:
			return nil
		case <-stopped:
			return errLogChanged // the writer's error is returned instead
		}
	})
	close(runs)
	wg.Wait()
	switch {
	case werr != nil:
		return werr
	case err != nil:
		return err
	case again != counts:
		return errLogChanged
	}
	return nil
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
