package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/trigger"
)

// ingest records object as the uploaded object of a new upload of the
// admin through the ingest function, and returns the upload as it ends.
func (h *harness) ingest(object []byte) scangate.Upload {
	h.t.Helper()
	resp := h.call("create-sarif-upload", jsonReq(&h.admin, `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,`+
		`"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":7,"pr_name":"n","pr_link":"l"}}`))
	return h.ingestUpload(int64(mustOK(h.t, resp)["id"].(float64)), object)
}

// ingestUpload records object as the uploaded object of upload id through
// the ingest function, and returns the upload as it ends.
func (h *harness) ingestUpload(id int64, object []byte) scangate.Upload {
	h.t.Helper()
	ctx := context.Background()
	g := trigger.Ingest{Store: h.env.Store, Bucket: oneObject(object),
		Log: slog.New(slog.NewJSONHandler(testWriter{h.t}, nil)), Now: time.Now, MaxBytes: scangate.MaxUploadBytes,
		Limits: trigger.UploadLimits(), Poll: trigger.DefaultIngestPoll}
	key := scangate.UploadKey(id)
	if err := g.Handle(ctx, events.S3Event{Records: []events.S3EventRecord{{EventName: "ObjectCreated:Put",
		S3: events.S3Entity{Object: events.S3Object{Key: key, URLDecodedKey: key, Size: int64(len(object))}}}}}); err != nil {
		h.t.Fatal(err)
	}
	got, err := h.env.Store.Upload(ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return got
}

// TestUploadRecordsOnlyWithItsCreatorsAuthority: an upload is recorded
// only if, when the ingest records it, its creator may still record scans
// and the token that created it is still valid: a creator deactivated
// (also when reactivated since), demoted to readonly, or whose token was
// revoked gets a failed upload with the reason (401 or 403), and nothing
// is recorded.
func TestUploadRecordsOnlyWithItsCreatorsAuthority(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log := gzipRaw(t, `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[{"ruleId":"k","message":{"text":"m"},`+
		`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":1,"snippet":{"text":"v"}}}}]}]}]}`)
	setUser := func(c scangate.Caller, role string, active bool) {
		r := jsonReq(&h.admin, fmt.Sprintf(`{"role":%q,"active":%v,"user_email":"%s@example.com"}`, role, active, c.Username))
		r.params = map[string]string{"user_id": fmt.Sprint(c.ID)}
		mustOK(t, h.call("update-user", r))
	}
	for i, c := range []struct {
		name   string
		lose   func(scangate.Caller)
		status int // of the failed upload's problem; 0: complete
	}{
		{"still-allowed", func(scangate.Caller) {}, 0},
		{"deactivated", func(c scangate.Caller) { setUser(c, "user", false) }, 401},
		{"reactivated", func(c scangate.Caller) { setUser(c, "user", false); setUser(c, "user", true) }, 401},
		{"demoted", func(c scangate.Caller) { setUser(c, "readonly", true) }, 403},
		{"revoked", func(c scangate.Caller) {
			r := jsonReq(&h.admin, "")
			r.params = map[string]string{"token_id": fmt.Sprint(c.TokenID)}
			if resp := h.call("revoke-token", r); resp.StatusCode != 204 {
				t.Fatalf("revoke: %d %s", resp.StatusCode, resp.Body)
			}
		}, 401},
	} {
		creator := h.member(c.name, scangate.RoleUser)
		resp := h.call("create-sarif-upload", jsonReq(&creator, fmt.Sprintf(`{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,`+
			`"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"}}`, 20+i)))
		id := int64(mustOK(t, resp)["id"].(float64))
		c.lose(creator)
		u := h.ingestUpload(id, log)
		switch {
		case c.status == 0 && (u.Status != scangate.UploadComplete || len(u.ScanIDs) != 1):
			t.Errorf("%s: %s %v %+v; want complete, one scan", c.name, u.Status, u.ScanIDs, u.Errors)
		case c.status != 0 && (u.Status != scangate.UploadFailed || len(u.ScanIDs) != 0 || len(u.Errors) != 1 ||
			u.Errors[0].Status != c.status || !strings.Contains(u.Errors[0].Detail, "creator")):
			t.Errorf("%s: %s %v %+v; want failed with a %d naming the creator", c.name, u.Status, u.ScanIDs, u.Errors, c.status)
		}
	}
	if rep, err := h.env.Store.Check(context.Background()); err != nil || rep.Scans != 1 {
		t.Errorf("recorded: %+v %v; want the one scan of the upload still allowed", rep, err)
	}
}

// oneObject is a bucket that holds one object, whatever its key.
type oneObject []byte

func (o oneObject) PresignPut(context.Context, string, time.Duration) (string, map[string]string, time.Time, error) {
	return "", nil, time.Time{}, nil
}

func (o oneObject) Open(context.Context, string) (io.ReadCloser, int64, error) {
	return io.NopCloser(bytes.NewReader(o)), int64(len(o)), nil
}

func (o oneObject) Delete(context.Context, string) error { return nil }

// gzipRaw is the gzip of s.
func gzipRaw(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(gzipped(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameAnswer sends a log in the three forms a log arrives in (the sarif
// member as an object, as base64 of its gzip, and the gzip as an uploaded
// object) and checks that each answers status, with the pointer ptr (into
// the log: /sarif then ptr inline, ptr alone for the upload) when it is a
// problem; for an object with trailing bytes, gz replaces the gzip.
func sameAnswer(t *testing.T, h *harness, name, log string, gz []byte, status int, ptr string) {
	t.Helper()
	own := gz == nil
	if own {
		gz = gzipRaw(t, log)
	}
	forms := map[string]func() (int, string){
		"upload": func() (int, string) {
			u := h.ingest(gz)
			if u.Status == scangate.UploadComplete {
				return 201, ""
			}
			if len(u.Errors) != 1 {
				t.Fatalf("%s: upload %+v", name, u)
			}
			p := u.Errors[0]
			if len(p.Errors) > 0 {
				return p.Status, "/sarif" + p.Errors[0].Pointer
			}
			return p.Status, ""
		},
		"base64 of gzip": func() (int, string) {
			return answer(t, h.uploadRaw(`"`+base64.StdEncoding.EncodeToString(gz)+`"`, ""))
		},
	}
	if own {
		forms["object"] = func() (int, string) { return answer(t, h.uploadRaw(log, "")) }
	}
	for form, f := range forms {
		got, p := f()
		if got != status || ptr != "" && p != "/sarif"+ptr {
			t.Errorf("%s as %s: %d at %q; want %d at %q", name, form, got, p, status, ptr)
		}
	}
}

// answer is a response's status and the pointer of its first problem.
func answer(t *testing.T, resp events.APIGatewayProxyResponse) (int, string) {
	t.Helper()
	if resp.StatusCode < 400 {
		return resp.StatusCode, ""
	}
	ptrs := expectProblem(t, resp, resp.StatusCode)
	if len(ptrs) > 0 {
		return resp.StatusCode, ptrs[0]
	}
	return resp.StatusCode, ""
}

// TestSARIFOneSetOfRules: a log is read by the same rules whether it comes
// as an object in the body, as base64 of its gzip, or as an uploaded gzip:
// a repeated member name and a lone surrogate escape are 400 in each, bytes
// after the gzip stream are 400 (not 413), the log may nest 128 levels and
// no more, and a log without a run is 422.
func TestSARIFOneSetOfRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	run := func(results string) string {
		return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bandit"}},"results":[` + results + `]}]}`
	}
	ok := `{"ruleId":"B101","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.py"},"region":{"startLine":1}}}]}`
	// A result's properties are the log's 6th level: nested(k) nests 6+k.
	nested := func(depth int) string {
		return `{"ruleId":"B102","message":{"text":"m"},"properties":{"deep":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
	}
	for _, c := range []struct {
		name, log string
		gz        []byte
		status    int
		ptr       string
	}{
		{"a repeated member", run(`{"ruleId":"B101","ruleId":"B999","message":{"text":"m"}}`), nil, 400, ""},
		{"a repeated member of a property bag", run(`{"ruleId":"B101","message":{"text":"m"},"properties":{"a":1,"a":2}}`), nil, 400, ""},
		{"a lone surrogate", run(`{"ruleId":"B101","message":{"text":"\ud800"}}`), nil, 400, ""},
		{"a lone low surrogate in a rule id", run(`{"ruleId":"B\udc00","message":{"text":"m"}}`), nil, 400, ""},
		{"bytes after the gzip stream", run(ok), append(gzipRaw(t, run(ok)), "trailing bytes"...), 400, ""},
		{"nested 129 levels", run(nested(123)), nil, 400, ""},
		{"no run", `{"version":"2.1.0","runs":[]}`, nil, 422, "/runs"},
		{"runs null", `{"version":"2.1.0","runs":null}`, nil, 422, "/runs"},
	} {
		sameAnswer(t, h, c.name, c.log, c.gz, c.status, c.ptr)
	}
	if rep, err := h.env.Store.Check(context.Background()); err != nil || rep.Scans != 0 {
		t.Errorf("refused logs recorded scans: %+v %v", rep, err)
	}
	// 128 levels within the log are read in every form: the body's own
	// limit of 32 levels does not apply to its log.
	sameAnswer(t, h, "nested 128 levels", run(nested(122)), nil, 201, "")
}

// TestSARIFStringsAndPathsBounded: every string of a log that would reach a
// stored item is bounded, and a path that leaves the checkout or holds a
// control character is refused: each is 422 pointing at the member, in
// every form, and nothing is recorded. An absolute path outside every
// checkout root the log names (a container image's file) is kept, cleaned.
func TestSARIFStringsAndPathsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := strings.Repeat("x", 300<<10)
	tool := func(driver string, results ...string) string {
		return `{"version":"2.1.0","runs":[{"tool":{"driver":{` + driver + `}},"results":[` + strings.Join(results, ",") + `]}]}`
	}
	at := func(uri string) string {
		return `{"ruleId":"B101","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"` + uri + `"}}}]}`
	}
	ok := at("a.py")
	for _, c := range []struct{ name, log, ptr string }{
		{"a 300 KB driver name", tool(`"name":"`+long+`"`, ok), "/runs/0/tool/driver/name"},
		{"a driver name of 257 characters", tool(`"name":"`+strings.Repeat("é", 257)+`"`, ok), "/runs/0/tool/driver/name"},
		{"a 300 KB driver version", tool(`"name":"bandit","version":"`+long+`"`, ok), "/runs/0/tool/driver/version"},
		{"a 300 KB semantic version", tool(`"name":"bandit","semanticVersion":"`+long+`"`, ok), "/runs/0/tool/driver/semanticVersion"},
		{"a driver name with a newline", tool(`"name":"band\nit"`, ok), "/runs/0/tool/driver/name"},
		{"a 300 KB extension name", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"CodeQL"},"extensions":[{"name":"` + long + `"}]},"results":[]}]}`,
			"/runs/0/tool/extensions/0/name"},
		{"a category over 100 characters", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bandit"}},"automationDetails":{"id":"` +
			strings.Repeat("c", 101) + `/run-1"},"results":[]}]}`, "/runs/0/automationDetails/id"},
		{"../../etc/passwd", tool(`"name":"bandit"`, at("../../etc/passwd")), "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"a climb through a base", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bandit"}},"originalUriBaseIds":{"SRC":{"uri":"../"}},` +
			`"results":[{"ruleId":"B101","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"x.py","uriBaseId":"SRC"}}}]}]}]}`,
			"/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"%00", tool(`"name":"bandit"`, at("a%00.py")), "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"%0a", tool(`"name":"bandit"`, at("a%0a.py")), "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"an escaped control character", tool(`"name":"bandit"`, at("a\\u0007.py")), "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"a right-to-left override", tool(`"name":"bandit"`, at("a\u202e.py")), "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{"a loop of base ids", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bandit"}},"originalUriBaseIds":{"A":{"uri":"a/","uriBaseId":"B"},"B":{"uri":"b/","uriBaseId":"A"}},"results":[]}]}`,
			"/runs/0/originalUriBaseIds/A/uriBaseId"},
		{"a base id that names itself", `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bandit"}},"originalUriBaseIds":{"S":{"uri":"s/","uriBaseId":"S"}},"results":[]}]}`,
			"/runs/0/originalUriBaseIds/S/uriBaseId"},
	} {
		sameAnswer(t, h, c.name, c.log, nil, 422, c.ptr)
	}
	if rep, err := h.env.Store.Check(context.Background()); err != nil || rep.Scans != 0 {
		t.Errorf("refused logs recorded scans: %+v %v", rep, err)
	}
	// Kept: an absolute path outside the checkout roots the log names,
	// cleaned; a relative path that climbs and comes back down.
	out := mustOK(t, h.uploadRaw(tool(`"name":"trivy"`, at("file:///usr/lib/../lib/python3/x.py"), at("src/../b.py")), ""))
	sc := out["scans"].([]any)[0].(map[string]any)
	var paths []string
	for _, it := range h.items() {
		if strings.HasPrefix(it["PK"], `{"Value":"SCAN#`) && strings.HasPrefix(it["SK"], `{"Value":"FINDING#`) {
			paths = append(paths, it["path"])
		}
	}
	if sc["vulnerability_count"] != 2.0 || len(paths) != 2 || !strings.Contains(strings.Join(paths, " "), `"/usr/lib/python3/x.py"`) ||
		!strings.Contains(strings.Join(paths, " "), `"b.py"`) {
		t.Errorf("recorded %v at %v", sc, paths)
	}
}
