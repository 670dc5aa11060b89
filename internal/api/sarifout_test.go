package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/sariftest"
	"github.com/scangate/scangate/internal/scangate"
)

// sarifLog is what the tests read of a log.
type sarifLog struct {
	Runs []struct {
		Tool              struct{ Driver struct{ Name string } }
		AutomationDetails struct{ ID string }
		Properties        map[string]any
		Results           []map[string]any
	}
}

// prSARIF is GET /pr/{pr}/sarif as c (the admin when nil).
func (h *harness) prSARIF(c *scangate.Caller, pr string) events.APIGatewayProxyResponse {
	h.t.Helper()
	if c == nil {
		c = &h.admin
	}
	return h.call("get-pr-sarif", request{caller: c, params: map[string]string{"pr_id": pr}})
}

// readSARIF checks a 200 answer of GET /pr/{pr_id}/sarif against the
// SARIF 2.1.0 schema and decodes it.
func readSARIF(t *testing.T, resp events.APIGatewayProxyResponse) sarifLog {
	t.Helper()
	if resp.StatusCode != 200 || resp.Headers["Content-Type"] != api.SARIFContentType {
		t.Fatalf("status %d, %v: %.500s", resp.StatusCode, resp.Headers, resp.Body)
	}
	sariftest.Check(t, []byte(resp.Body))
	var l sarifLog
	if err := json.Unmarshal([]byte(resp.Body), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// summary is a result as name=baselineState, with its suppressions'
// justifications.
func summary(r map[string]any) string {
	s := fmt.Sprint(r["properties"].(map[string]any)["name"], "=", r["baselineState"])
	for _, sp := range asList(r["suppressions"]) {
		m := sp.(map[string]any)
		s += fmt.Sprint(" ", m["kind"])
		if j, ok := m["justification"]; ok {
			s += fmt.Sprintf("(%s)", j)
		}
	}
	return s
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestPRSARIF: GET /pr/{pr_id}/sarif answers a SARIF 2.1.0 log (checked
// against the schema) of the PR's newest scans, one run per category:
// the inline scan's findings new or unchanged against the base's
// analysis, and the base's findings the PR fixed as absent; a finding
// dismissed by an allowlist of its fingerprint suppressed with the
// allowlist's reason and id; a SARIF scan's tool, its inSource
// suppression and its scanner's fingerprint. A token scoped to another
// repository gets 404, one scoped to it the log; the round trips are
// those of the PR, one Query a scan and one a baseline, and one
// BatchGetItem of allowlists.
func TestPRSARIF(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sha := strings.Repeat("a", 40)
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, `,"commit_sha":"`+sha+`"`, "sha256:x@10", "sha256:y@20", "sha256:z@30"))))
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 7, `,"base_ref":"main","base_sha":"`+sha+`"`, "sha256:x@15", "sha256:w@3"))))
	prID := fmt.Sprint(sc["pr_id"])
	mustOK(t, h.upload(golden(t, "semgrep.sarif"), ""))
	var w map[string]any
	for _, f := range findingsOf(h, fmt.Sprint(sc["id"])) {
		if f["name"] == "sha256:w" {
			w = f
		}
	}
	// Dismiss w: its repository, its fingerprint.
	mustOK(t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":"sha256:w","repos":[100],"fingerprints":[%q],"reason":"used_in_tests"}`, w["fingerprint"])))

	before := h.env.RoundTrips()
	resp := h.prSARIF(nil, prID)
	trips := h.env.RoundTrips() - before
	l := readSARIF(t, resp)
	var cats []string
	for _, r := range l.Runs {
		cats = append(cats, r.AutomationDetails.ID)
	}
	if len(l.Runs) != 2 || cats[0] != "default" || !strings.HasPrefix(cats[1], "semgrep") {
		t.Fatalf("runs of categories %v", cats)
	}
	def := l.Runs[0]
	var got []string
	for _, r := range def.Results {
		got = append(got, summary(r))
	}
	want := []string{"sha256:x=unchanged", "sha256:w=new external(used_in_tests (allowlist 1))", "sha256:y=absent", "sha256:z=absent"}
	if !slices.Equal(got, want) {
		t.Errorf("the default run's results %q; want %q", got, want)
	}
	x := def.Results[0]
	if fp := x["partialFingerprints"].(map[string]any); len(fp) != 1 || fp["scangate/derived/v1"] == nil || x["ruleId"] != "k" ||
		x["level"] != "error" || x["properties"].(map[string]any)["severity"] != "high" {
		t.Errorf("x: %v", x)
	}
	if sp := def.Results[1]["suppressions"].([]any)[0].(map[string]any); sp["properties"].(map[string]any)["allowlist_id"] != 1.0 {
		t.Errorf("w's suppression: %v", sp)
	}
	if def.Properties["commit_sha"] != nil || fmt.Sprint(def.Properties["scan_ids"]) != fmt.Sprintf("[%v]", sc["id"]) {
		t.Errorf("the default run's properties: %v", def.Properties)
	}
	semgrep := l.Runs[1]
	inSource := 0
	for _, r := range semgrep.Results {
		if fp := r["partialFingerprints"].(map[string]any); fp["scangate/scanner/v1"] == nil {
			t.Errorf("a semgrep result's fingerprints: %v", fp)
		}
		if s := summary(r); strings.HasSuffix(s, " inSource") {
			inSource++
		}
		if r["baselineState"] != "new" {
			t.Errorf("a semgrep result without a base: %v", r["baselineState"])
		}
	}
	if semgrep.Tool.Driver.Name != "Semgrep OSS" || len(semgrep.Results) != 6 || inSource != 1 {
		t.Errorf("the semgrep run: tool %q, %d results, %d suppressed in source", semgrep.Tool.Driver.Name, len(semgrep.Results), inSource)
	}
	// Its PR (an id item, its record), its 3 newest scans (one
	// BatchGetItem), one Query of each scan's findings, one of the
	// baseline's absent ones, one BatchGetItem of the allowlist.
	if trips != 8 {
		t.Errorf("%d round trips; want 8", trips)
	}

	// Scoped tokens: their repositories only.
	mine, _ := h.scopedCaller(&h.admin, `{"name":"mine","scope":"read","repos":[{"vc_id":10,"repo_id":100}]}`)
	theirs, _ := h.scopedCaller(&h.admin, `{"name":"theirs","scope":"read","repos":[{"vc_id":10,"repo_id":200}]}`)
	if again := h.prSARIF(&mine, prID); again.StatusCode != 200 || again.Body != resp.Body {
		t.Errorf("a token of the repository: %d", again.StatusCode)
	}
	expectProblem(t, h.prSARIF(&theirs, prID), 404)
	expectProblem(t, h.prSARIF(nil, "999"), 404)
	expectProblem(t, h.prSARIF(nil, "0x1"), 422)
}

// TestPRSARIFLarge: a log larger than the answer may be is written to the
// bucket as it is read, and the answer is 303 to a presigned GET of it
// (never cached), which reads the same log as the inline answer.
func TestPRSARIFLarge(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 7, ``, "sha256:x@15", "sha256:w@3", "sha256:<&>@4"))))
	prID := fmt.Sprint(sc["pr_id"])
	inline := h.prSARIF(nil, prID)
	if inline.StatusCode != 200 {
		t.Fatalf("inline: %d %s", inline.StatusCode, inline.Body)
	}
	get := func(limit int) events.APIGatewayProxyResponse {
		ev := events.APIGatewayProxyRequest{PathParameters: map[string]string{"pr_id": prID}}
		h.present(&ev, &h.admin)
		resp, _ := api.GetPRSARIF(h.store, h.Bucket(), limit, slog.New(slog.NewJSONHandler(testWriter{t}, nil))).Handle(context.Background(), ev)
		return resp
	}
	// The limit is of the body as Lambda's response escapes it: the log
	// fits at its escaped length, not a byte less.
	b, _ := json.Marshal(inline.Body)
	escaped := len(b) - 2
	if r := get(escaped); r.StatusCode != 200 || r.Body != inline.Body {
		t.Errorf("at the limit: %d", r.StatusCode)
	}
	r := get(escaped - 1)
	if r.StatusCode != 303 || r.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("past the limit: %d %v %s", r.StatusCode, r.Headers, r.Body)
	}
	body := decode(t, r)
	if body["download_url"] != r.Headers["Location"] || body["size"] != float64(len(inline.Body)) {
		t.Errorf("the answer %v, Location %s", body, r.Headers["Location"])
	}
	dl, err := http.Get(r.Headers["Location"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dl.Body.Close() }()
	got, _ := io.ReadAll(dl.Body)
	if dl.StatusCode != 200 || string(got) != inline.Body || dl.Header.Get("Content-Type") != api.SARIFContentType {
		t.Errorf("the download: %d %s %.200s", dl.StatusCode, dl.Header.Get("Content-Type"), got)
	}
}

// TestPRSARIF25k (make test-sarif-out, with the SARIF SDK's multitool
// in SCANGATE_SARIF_MULTITOOL): a PR of 25,000 findings (25 categories
// of 1,000) is answered through the bucket: the whole log, every result
// once, valid by the schema and by the multitool's validate; the round
// trips are the PR's three and one Query per page of a scan's findings
// (a DynamoDB page holds a scan's 1,000).
func TestPRSARIF25k(t *testing.T) {
	tool := os.Getenv("SCANGATE_SARIF_MULTITOOL")
	if tool == "" {
		t.Skip("make test-sarif-out runs it, with SCANGATE_SARIF_MULTITOOL")
	}
	t.Parallel()
	h := newHarness(t)
	var fs []string
	for i := range 1000 {
		fs = append(fs, fmt.Sprintf(`{"name":"sha256:%04d","rule":"generic-api-key","path":"src/config/settings_%d.py","line":%d,"severity":"high"}`, i, i%50, i+1))
	}
	var prID string
	for c := range 25 {
		body := fmt.Sprintf(`{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"v","repo_id":100,"repo_name":"o/r","webhook_id":3,`+
			`"status":"completed","category":"c%02d","pr":{"pr_id":7,"pr_name":"n","pr_link":"l"},"findings":[%s]}`, c, strings.Join(fs, ","))
		prID = fmt.Sprint(mustOK(t, h.call("record-scan", jsonReq(&h.admin, body)))["pr_id"])
	}
	before := h.env.RoundTrips()
	r := h.prSARIF(nil, prID)
	trips := h.env.RoundTrips() - before
	if r.StatusCode != 303 {
		t.Fatalf("status %d: %.300s", r.StatusCode, r.Body)
	}
	if len(r.Body) > 6<<20 {
		t.Errorf("the answer is %d bytes", len(r.Body))
	}
	dl, err := http.Get(r.Headers["Location"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dl.Body.Close() }()
	log, _ := io.ReadAll(dl.Body)
	sariftest.Check(t, log)
	var l sarifLog
	if err := json.Unmarshal(log, &l); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, run := range l.Runs {
		n += len(run.Results)
	}
	if len(l.Runs) != 25 || n != 25000 {
		t.Errorf("%d runs, %d results", len(l.Runs), n)
	}
	t.Logf("a log of %d bytes, %d round trips", len(log), trips)
	path := filepath.Join(t.TempDir(), "pr.sarif")
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	// Its default skips a log of more than 10,000 KB.
	out, err := exec.Command(tool, "validate", "--max-file-size-in-kb", "102400", path).CombinedOutput()
	// Its rules' warnings (SARIF2xxx: no informationUri, no rule
	// metadata) are advice; errors are not.
	if err != nil || regexp.MustCompile(`(?m): error [A-Z]+[0-9]+`).Match(out) || !bytes.Contains(out, []byte("Analysis completed successfully")) {
		t.Errorf("sarif-multitool validate: %v\n%s", err, tail(out, 4000))
	}
	t.Logf("sarif-multitool validate:\n%s", tail(out, 2000))
	if trips < 28 || trips > 3+2*25 {
		t.Errorf("%d round trips; want 28 (3 and one a scan), at most %d", trips, 3+2*25)
	}
}

// tail is the end of b, at most n bytes.
func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// failingWalk is a SARIFReader whose WalkFindings gives a scan's first
// page again and again, more than a part of the bucket, then fails.
type failingWalk struct {
	api.SARIFReader
	bytes int
}

var errWalk = errors.New("walk failed")

func (f failingWalk) WalkFindings(ctx context.Context, scanID int64, fn func([]scangate.RecordedFinding) error) error {
	var page []scangate.RecordedFinding
	if err := f.SARIFReader.WalkFindings(ctx, scanID, func(fs []scangate.RecordedFinding) error {
		page = append(page, fs...)
		return nil
	}); err != nil {
		return err
	}
	for range f.bytes / (200 * len(page)) {
		if err := fn(page); err != nil {
			return err
		}
	}
	return errWalk
}

// watchedDownloads records the objects its bucket creates and which it
// aborts.
type watchedDownloads struct {
	*bucket.Bucket
	keys    []string
	aborted int
}

func (d *watchedDownloads) Create(ctx context.Context, key, contentType string) api.Object {
	d.keys = append(d.keys, key)
	return abortWatch{Object: d.Bucket.Create(ctx, key, contentType), d: d}
}

type abortWatch struct {
	api.Object
	d *watchedDownloads
}

func (a abortWatch) Abort() { a.d.aborted++; a.Object.Abort() }

// TestPRSARIFLargeFails: a log that fails to be read after it has gone
// to the bucket, in a multipart upload, is abandoned: the upload is
// aborted (none is left in the bucket) and the answer is 500.
func TestPRSARIFLargeFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 7, ``, "sha256:x@15", "sha256:w@3"))))
	ev := events.APIGatewayProxyRequest{PathParameters: map[string]string{"pr_id": fmt.Sprint(sc["pr_id"])}}
	h.present(&ev, &h.admin)
	dl := &watchedDownloads{Bucket: h.Bucket()}
	resp, _ := api.GetPRSARIF(failingWalk{SARIFReader: h.store, bytes: 2 * bucket.PartSize}, dl, 1000,
		slog.New(slog.NewJSONHandler(testWriter{t}, nil))).Handle(context.Background(), ev)
	expectProblem(t, resp, 500)
	if len(dl.keys) != 1 || dl.aborted != 1 {
		t.Fatalf("objects %v, %d aborted", dl.keys, dl.aborted)
	}
	b := h.Bucket()
	name := b.Name()
	ups, err := b.Client().ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &name, Prefix: &dl.keys[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Errorf("uploads left: %d", len(ups.Uploads))
	}
	if _, err := b.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &name, Key: &dl.keys[0]}); err == nil {
		t.Error("the object was stored")
	}
}
