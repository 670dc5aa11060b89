package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
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
	Scans              []scangate.ScanView `json:"scans"`
	Results            int                 `json:"results"`
	Recorded           int                 `json:"recorded"`
	SuppressedInSource int                 `json:"suppressed_in_source"`
	Skipped            int                 `json:"skipped"`
}

// RecordSARIF is POST /pr/scan/sarif: a scanner's SARIF log, unchanged, in
// the envelope of POST /pr/scan; one scan per (scan type, category).
func RecordSARIF(st ScanStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RecordSARIF", Roles: recordRoles, Users: st, ScanScope: true, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			raw, err := rawBody(req, MaxSARIFBody)
			if err != nil {
				return Reply{}, err
			}
			env, rep, err := readSARIFUpload(raw)
			if err != nil {
				return Reply{}, err
			}
			out, err := RecordReport(ctx, st, env, rep, Recording{Who: whoOf(c, req), At: now(), MaxFindings: sarif.DefaultLimits().FindingsPerType})
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

// Recording is how a read log is recorded: by whom (its audit entries),
// when, at most once per key Once (an S3 event's redeliveries: "" for
// none), and at most MaxFindings findings a scan.
type Recording struct {
	Who         scangate.Who
	At          time.Time
	Once        string
	MaxFindings int
}

// RecordReport records the scans of a read log in the envelope env,
// exactly as POST /pr/scan records a scan, in one commit: one scan per
// (scan type, category), for every run of the log (a run that found
// nothing records a completed scan with no finding: a clean re-scan
// clears its category). A run's category is its own unless the envelope
// names one for every run. The tools of each scan go into its
// other_details.tools.
func RecordReport(ctx context.Context, st ScanStore, env scangate.NewScan, rep *sarif.Report, r Recording) (uploadBody, error) {
	out := uploadBody{Scans: []scangate.ScanView{}, Results: rep.Results, Skipped: rep.Skipped}
	if r.MaxFindings <= 0 {
		r.MaxFindings = sarif.DefaultLimits().FindingsPerType
	}
	scans, err := reportScans(env, rep, r.MaxFindings)
	if err != nil {
		return out, err
	}
	nss := make([]scangate.NewScan, len(scans))
	for i, sc := range scans {
		nss[i] = sc.ns
		if nss[i].OtherDetails, err = withTools(env.OtherDetails, sc.tools); err != nil {
			return out, err
		}
		for _, f := range sc.ns.Findings {
			out.Recorded++
			if f.InSource {
				out.SuppressedInSource++
			}
		}
	}
	recorded, pr, _, err := st.RecordScans(ctx, nss, r.Who, r.At, r.Once)
	if err != nil {
		return out, err
	}
	for _, sc := range recorded {
		out.Scans = append(out.Scans, scangate.ViewScan(sc, pr))
	}
	return out, nil
}

// reportScan is one scan a log records: its (type, category), findings
// and tools.
type reportScan struct {
	ns    scangate.NewScan
	tools []sarif.Tool
	seen  map[string]int // a finding's identity: its place in ns.Findings
}

// reportScans gathers the runs of a log into scans, one per (type,
// category), in the order the runs name them. Runs of one category were
// de-duplicated by the reader; runs that the envelope's category puts
// together are de-duplicated here, by the reader's rule (the same type,
// name, path and line: suppressed only if every occurrence is, aliases
// united, the higher severity), and a scan holds at most max findings
// (413 past it).
func reportScans(env scangate.NewScan, rep *sarif.Report, max int) ([]*reportScan, error) {
	var scans []*reportScan
	at := map[string]*reportScan{}
	for _, run := range rep.Runs {
		cat := run.Category
		if env.Category != "" {
			cat = env.Category
		}
		for _, t := range run.Types() {
			k := string(t) + "#" + cat
			sc := at[k]
			if sc == nil {
				ns := env
				ns.Type, ns.Category, ns.Findings = t, cat, nil
				sc = &reportScan{ns: ns, seen: map[string]int{}}
				at[k] = sc
				scans = append(scans, sc)
			}
			if !slices.Contains(sc.tools, run.Tool) {
				sc.tools = append(sc.tools, run.Tool)
			}
			for _, f := range run.Findings(t) {
				if err := sc.add(f); err != nil {
					return nil, err
				}
			}
			if len(sc.ns.Findings) > max {
				return nil, failf(http.StatusRequestEntityTooLarge,
					"the SARIF log holds more than %d findings of one scan type and category (limit findings_per_type)", max)
			}
		}
	}
	return scans, nil
}

// add adds a finding to the scan, or merges it into the one it repeats.
func (sc *reportScan) add(f scangate.Finding) error {
	line := ""
	if f.Line != nil {
		line = strconv.FormatInt(*f.Line, 10)
	}
	id := scangate.FindingKey(sc.ns.Type, f.Name) + "\x00" + f.Path + "\x00" + line
	i, ok := sc.seen[id]
	if !ok {
		sc.seen[id] = len(sc.ns.Findings)
		sc.ns.Findings = append(sc.ns.Findings, f)
		return nil
	}
	g := &sc.ns.Findings[i]
	g.InSource = g.InSource && f.InSource
	if !g.Severity.AtLeast(f.Severity) {
		g.Severity = f.Severity
	}
	for _, a := range f.Aliases {
		if !slices.ContainsFunc(g.Aliases, func(b string) bool { return strings.EqualFold(a, b) }) && !strings.EqualFold(a, g.Name) {
			g.Aliases = append(g.Aliases, a)
		}
	}
	if len(g.Aliases) > scangate.MaxAliases {
		return scangate.Errorf(scangate.KindInvalid, "the finding %s, reported by several runs put in the category %s, has more than %d aliases",
			g.Name, sc.ns.Category, scangate.MaxAliases)
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
