package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/sarifout"
	"github.com/scangate/scangate/internal/scangate"
)

// SARIFReader reads what a pull request's SARIF log is made of.
type SARIFReader interface {
	PRNewestScans(ctx context.Context, prID int64) (scangate.PR, []scangate.Scan, error)
	WalkFindings(ctx context.Context, scanID int64, fn func([]scangate.RecordedFinding) error) error
	WalkAbsent(ctx context.Context, sc scangate.Scan, fn func([]scangate.AbsentFinding) error) error
	AllowlistsByID(ctx context.Context, ids []int64) (map[int64]scangate.Allowlist, error)
}

// Downloads is where a log too large to answer inline is left for its
// caller (the uploads bucket, internal/bucket).
type Downloads interface {
	// Create starts writing an object.
	Create(ctx context.Context, key, contentType string) Object
	// PresignGet presigns the GET of an object, valid for ttl: its URL
	// and when it expires.
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
}

// Object is an object being written: Close stores it, Abort abandons it
// (nothing is stored). An alias, the type internal/bucket's Create
// returns.
type Object = interface {
	io.WriteCloser
	Abort()
}

// SARIFContentType is the type of a SARIF log (SARIF 2.1.0, appendix H).
const SARIFContentType = "application/sarif+json"

// Sizes of GET /pr/{pr_id}/sarif's answer.
const (
	// SARIFInlineMax bounds a log answered inline, as Lambda's response
	// carries it (escaped in a JSON string): Lambda takes 6 MB, the rest
	// is headroom for the envelope and headers (config's
	// MaxSARIFInlineBytes).
	SARIFInlineMax = 5 << 20
	// SARIFDownloadTTL is how long the link to a larger log is valid.
	SARIFDownloadTTL = 15 * time.Minute
	// sarifPrefix is where larger logs are kept in the bucket (its rule
	// expires them after a day; the ingest function reads uploads/ only).
	sarifPrefix = "sarif/"
)

// sarifDownloadBody is the body of the answer that sends the caller to a
// larger log.
type sarifDownloadBody struct {
	DownloadURL string        `json:"download_url"`
	ExpiresAt   scangate.Time `json:"expires_at"`
	Size        int64         `json:"size"`
}

// GetPRSARIF is GET /pr/{pr_id}/sarif: a SARIF 2.1.0 log of the pull
// request's newest scans, one run per category. The log is written as
// the findings are read, a page of DynamoDB at a time: up to inlineMax
// bytes as Lambda's response escapes them it is the answer (200,
// application/sarif+json); a larger one is written to the bucket as it is
// read and the answer is 303 See Other to a presigned GET of it, valid
// SARIFDownloadTTL. An inlineMax of 0 or above SARIFInlineMax is
// SARIFInlineMax.
func GetPRSARIF(st SARIFReader, dl Downloads, inlineMax int, log *slog.Logger) Endpoint {
	if inlineMax <= 0 || inlineMax > SARIFInlineMax {
		inlineMax = SARIFInlineMax
	}
	return Endpoint{Name: "GetPRSARIF", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "pr_id")
			if err != nil {
				return Reply{}, err
			}
			pr, scans, err := st.PRNewestScans(ctx, id)
			if err == nil {
				err = mayRead(c, pr.VcID, pr.RepoID, "no pull request has the id %d", id)
			}
			if err != nil {
				return Reply{}, err
			}
			key := sarifKey(id)
			out := &spill{limit: inlineMax, open: func() Object { return dl.Create(ctx, key, SARIFContentType) }}
			if err := writePRSARIF(ctx, st, out, scans); err != nil {
				out.abort()
				return Reply{}, err
			}
			if out.obj == nil {
				return Reply{Status: http.StatusOK, Raw: out.buf.Bytes(), Headers: map[string]string{"Content-Type": SARIFContentType}}, nil
			}
			if err := out.obj.Close(); err != nil {
				return Reply{}, fmt.Errorf("store the sarif log of PR %d: %w", id, err)
			}
			url, expires, err := dl.PresignGet(ctx, key, SARIFDownloadTTL)
			if err != nil {
				return Reply{}, err
			}
			// The URL lets whoever holds it read the log: never cached.
			return Reply{Status: http.StatusSeeOther, Location: url, Secret: true,
				Body: sarifDownloadBody{DownloadURL: url, ExpiresAt: scangate.At(expires), Size: out.size}}, nil
		}}
}

// sarifKey names a new object of a pull request's log.
func sarifKey(prID int64) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return sarifPrefix + "pr-" + strconv.FormatInt(prID, 10) + "/" + hex.EncodeToString(b[:]) + ".sarif"
}

// writePRSARIF writes the log of scans (a PR's newest, by type then
// category) to w: one run per category, with each scan's findings in
// their order, then its baseline's absent ones.
func writePRSARIF(ctx context.Context, st SARIFReader, w io.Writer, scans []scangate.Scan) error {
	sw := sarifout.New(w)
	reasons := map[int64]string{} // allowlist id → reason, as read
	var order []string
	byCat := map[string][]scangate.Scan{}
	for _, sc := range scans {
		if _, ok := byCat[sc.Category]; !ok {
			order = append(order, sc.Category)
		}
		byCat[sc.Category] = append(byCat[sc.Category], sc)
	}
	slices.Sort(order)
	for _, cat := range order {
		if err := sw.Run(runOf(cat, byCat[cat])); err != nil {
			return err
		}
		for _, sc := range byCat[cat] {
			if err := writeScanResults(ctx, st, sw, sc, reasons); err != nil {
				return err
			}
		}
	}
	return sw.Close()
}

// writeScanResults writes a scan's findings, then its absent ones.
func writeScanResults(ctx context.Context, st SARIFReader, sw *sarifout.Writer, sc scangate.Scan, reasons map[int64]string) error {
	err := st.WalkFindings(ctx, sc.ID, func(fs []scangate.RecordedFinding) error {
		if err := readReasons(ctx, st, fs, reasons); err != nil {
			return err
		}
		for _, f := range fs {
			r := sarifout.Result{Type: sc.Type, Name: f.Name, Aliases: f.Aliases, Rule: f.Rule, Path: f.Path, Line: f.Line,
				Severity: f.Severity, Fingerprint: f.Fingerprint, FPSource: f.FingerprintSource, BaselineState: f.BaselineState,
				InSource:   f.InSource,
				Properties: map[string]any{"scan_id": sc.ID, "finding_id": f.Index + 1, "suppressed": f.Suppressed}}
			for _, a := range f.SuppressedBy {
				r.Suppressions = append(r.Suppressions, sarifout.Suppression{AllowlistID: a, Reason: reasons[a]})
			}
			if err := sw.Result(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || sc.Class.BaselineScanID == 0 {
		return err
	}
	return st.WalkAbsent(ctx, sc, func(fs []scangate.AbsentFinding) error {
		for _, f := range fs {
			r := sarifout.Result{Type: sc.Type, Name: f.Name, Aliases: f.Aliases, Rule: f.Rule, Path: f.Path, Line: f.Line,
				Severity: f.Severity, Fingerprint: f.Fingerprint, FPSource: f.FingerprintSource, BaselineState: scangate.BaselineAbsent,
				Properties: map[string]any{"scan_id": sc.ID, "baseline_scan_id": f.BaselineScanID, "baseline_finding_id": f.Index + 1}}
			if err := sw.Result(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// readReasons reads the reasons of the allowlists of a page of findings
// not read yet: one BatchGetItem a page that names new ones. An
// allowlist read and found to have none, or not found, is kept as "".
func readReasons(ctx context.Context, st SARIFReader, fs []scangate.RecordedFinding, reasons map[int64]string) error {
	var ids []int64
	for _, f := range fs {
		for _, a := range f.SuppressedBy {
			if _, ok := reasons[a]; !ok && !slices.Contains(ids, a) {
				ids = append(ids, a)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	as, err := st.AllowlistsByID(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		reasons[id] = as[id].Reason
	}
	return nil
}

// runOf is the run of a category's scans: its tool is the first tool
// their other_details name (a SARIF log's), else scangate; its
// properties name the scans, their commit and their baselines.
func runOf(category string, scans []scangate.Scan) sarifout.Run {
	r := sarifout.Run{Category: category, Tool: sarifout.Tool{Name: "scangate"}}
	found := false
	var ids []int64
	var baselines []map[string]any
	commit := ""
	for _, sc := range scans {
		ids = append(ids, sc.ID)
		if commit == "" {
			commit = sc.CommitSHA
		}
		if b := sc.Class; b.BaselineScanID != 0 {
			baselines = append(baselines, map[string]any{"scan_type": string(sc.Type), "scan_id": b.BaselineScanID, "match": b.Match})
		}
		if found {
			continue
		}
		var d struct {
			Tools []sarifout.Tool `json:"tools"`
		}
		if json.Unmarshal(sc.OtherDetails, &d) == nil && len(d.Tools) > 0 && d.Tools[0].Name != "" {
			r.Tool, found = d.Tools[0], true
		}
	}
	r.Properties = map[string]any{"scan_ids": ids}
	if commit != "" {
		r.Properties["commit_sha"] = commit
	}
	if len(baselines) > 0 {
		r.Properties["baselines"] = baselines
	}
	return r
}

// spill holds a log in memory up to limit bytes as Lambda's response
// escapes them, then writes it, and the rest as it comes, to an object
// it opens.
type spill struct {
	limit   int
	open    func() Object
	buf     bytes.Buffer
	escaped int // buf's length escaped in a JSON string
	obj     Object
	size    int64
}

func (s *spill) Write(p []byte) (int, error) {
	s.size += int64(len(p))
	if s.obj == nil {
		if e := s.escaped + escapedLen(p); e <= s.limit {
			s.escaped = e
			return s.buf.Write(p)
		}
		s.obj = s.open()
		if _, err := s.obj.Write(s.buf.Bytes()); err != nil {
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	return s.obj.Write(p)
}

// abort abandons the object after a failure.
func (s *spill) abort() {
	if s.obj != nil {
		s.obj.Abort()
	}
}
