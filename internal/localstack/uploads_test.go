package localstack_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
)

// The tests of large uploads run on the embedded S3 server, or, when
// TEST_S3_ENDPOINT is set (make test-s3: S3Proxy), on that server, each on
// a bucket of its own; both check signatures as S3 does.

const uploadAdminPassword = "admin-password-1"

type uploadEnv struct {
	stack *localstack.Stack
	api   string
	admin string
	db    *ddbtest.Env
}

// startUploads runs the local stack, without demo data, for upload tests;
// alter may change its options.
func startUploads(t *testing.T, alter func(*localstack.Options)) uploadEnv {
	t.Helper()
	env := ddbtest.New(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	o := localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin",
		AdminPassword: uploadAdminPassword, AuthorizerTTL: 0, TokenTTL: time.Hour,
		Log:        slog.New(slog.NewJSONHandler(io.Discard, nil)),
		S3Endpoint: os.Getenv("TEST_S3_ENDPOINT"), Bucket: "scangate-test-" + hex.EncodeToString(b[:]),
		NotifyInterval: 50 * time.Millisecond,
	}
	if alter != nil {
		alter(&o)
	}
	stack, err := localstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	srv := httptest.NewServer(stack.Handler)
	t.Cleanup(srv.Close)
	api := srv.URL + "/api"
	return uploadEnv{stack: stack, api: api, admin: loginToken(t, api, "admin", uploadAdminPassword), db: env}
}

// sarifLog is a SARIF log of two runs: gitleaks with secrets results
// (distinct values) and osv-scanner with vulns results (distinct CVEs).
func sarifLog(secrets, vulns int, salt string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks","version":"8.30.1"}},"results":[`)
	for i := range secrets {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ruleId":"generic-api-key","message":{"text":"secret"},"locations":[{"physicalLocation":`+
			`{"artifactLocation":{"uri":"src/s%d.go"},"region":{"startLine":%d,"snippet":{"text":"value-%s-%d"}}}}]}`, i, i+1, salt, i)
	}
	b.WriteString(`]},{"tool":{"driver":{"name":"osv-scanner","version":"2.2.0"}},"results":[`)
	for i := range vulns {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ruleId":"CVE-2099-%d","message":{"text":"vulnerable"},"locations":[{"physicalLocation":`+
			`{"artifactLocation":{"uri":"go.sum"},"region":{"startLine":%d}}}]}`, 10000+i, i+1)
	}
	b.WriteString(`]}]}`)
	return b.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// created is the answer of POST /pr/scan/sarif/uploads.
type created struct {
	ID            int64             `json:"id"`
	Status        string            `json:"status"`
	UploadURL     string            `json:"upload_url"`
	UploadHeaders map[string]string `json:"upload_headers"`
	ExpiresAt     string            `json:"expires_at"`
}

// uploadStatus is GET /pr/scan/sarif/uploads/{id}.
type uploadStatus struct {
	ID          int64              `json:"id"`
	Status      string             `json:"status"`
	Errors      []scangate.Problem `json:"errors"`
	ScanIDs     []int64            `json:"scan_ids"`
	Results     int                `json:"results"`
	Recorded    int                `json:"recorded"`
	CreatedAt   string             `json:"created_at"`
	CompletedAt *string            `json:"completed_at"`
}

func (e uploadEnv) create(t testing.TB, pr int) created {
	t.Helper()
	resp, body := do(t, "POST", e.api+"/pr/scan/sarif/uploads", e.admin, fmt.Sprintf(`{"vc_type":"github","vc_id":10,"vc_name":"acme",`+
		`"repo_id":100,"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":%d,"pr_name":"Big scan","pr_link":"https://git.example.com/acme/api/pull/%d"}}`, pr, pr))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create upload: %d %s", resp.StatusCode, body)
	}
	var c created
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if want := "/api/pr/scan/sarif/uploads/" + strconv.FormatInt(c.ID, 10); !strings.HasSuffix(resp.Header.Get("Location"), want) {
		t.Errorf("Location %q; want it to end in %s", resp.Header.Get("Location"), want)
	}
	// The URL is a credential for 15 minutes: no cache may keep it.
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q on the answer carrying upload_url; want no-store", cc)
	}
	return c
}

// put PUTs an object to a presigned URL with headers, as a client does.
func put(t testing.TB, rawURL string, headers map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, rawURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e uploadEnv) status(t testing.TB, id int64) uploadStatus {
	t.Helper()
	resp, body := do(t, "GET", fmt.Sprintf("%s/pr/scan/sarif/uploads/%d", e.api, id), e.admin, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("get upload %d: %d %s", id, resp.StatusCode, body)
	}
	var u uploadStatus
	if err := json.Unmarshal([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// await polls an upload until it is complete or failed (for at most a
// minute: a bound, not a measurement).
func (e uploadEnv) await(t testing.TB, id int64) uploadStatus {
	t.Helper()
	for range 1200 {
		if u := e.status(t, id); u.Status == "complete" || u.Status == "failed" {
			return u
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("upload %d did not end", id)
	return uploadStatus{}
}

// objectGone waits until the bucket no longer holds an upload's object.
func (e uploadEnv) objectGone(t testing.TB, id int64) {
	t.Helper()
	for range 200 {
		body, _, err := e.stack.Bucket.Open(context.Background(), scangate.UploadKey(id))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err == nil {
			_ = body.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("the object of upload %d was not deleted", id)
}

// check runs Store.Check and wants no drift and scans scans.
func (e uploadEnv) check(t testing.TB, scans int) {
	t.Helper()
	rep, err := e.db.Store.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Scans != scans || len(rep.Drift) > 0 {
		t.Errorf("check: %d scans (want %d), drift %v", rep.Scans, scans, rep.Drift)
	}
}

// TestUploadEndToEnd: create an upload, PUT the gzip of a log to its URL
// with its headers, poll until complete, and read the scans it lists.
func TestUploadEndToEnd(t *testing.T) {
	e := startUploads(t, nil)
	before := time.Now()
	c := e.create(t, 7)
	u, _ := url.Parse(c.UploadURL)
	expires, err := time.Parse(time.RFC3339, c.ExpiresAt)
	switch {
	case err != nil:
		t.Fatal(err)
	case c.Status != "awaiting_upload" || c.UploadHeaders["Content-Type"] != "application/gzip":
		t.Errorf("created %+v", c)
	case u.Query().Get("X-Amz-Expires") != "900" || u.Query().Get("X-Amz-Signature") == "":
		t.Errorf("upload_url %s is not a presigned URL valid 15 minutes", c.UploadURL)
	case expires.Before(before.Add(15*time.Minute-2*time.Second)) || expires.After(time.Now().Add(15*time.Minute+2*time.Second)):
		t.Errorf("expires_at %s is not 15 minutes from now", c.ExpiresAt)
	case !strings.HasSuffix(u.Path, "/uploads/"+strconv.FormatInt(c.ID, 10)):
		t.Errorf("upload_url %s is not the upload's key", c.UploadURL)
	}
	if s := e.status(t, c.ID); s.Status != "awaiting_upload" || s.CompletedAt != nil || len(s.ScanIDs) != 0 {
		t.Errorf("before its PUT: %+v", s)
	}
	if code, body := put(t, c.UploadURL, c.UploadHeaders, gz(t, sarifLog(30, 20, "e2e"))); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}
	s := e.await(t, c.ID)
	if s.Status != "complete" || s.Results != 50 || s.Recorded != 50 || len(s.ScanIDs) != 2 || len(s.Errors) != 0 || s.CompletedAt == nil {
		t.Fatalf("after its PUT: %+v", s)
	}
	want := map[string]struct {
		secrets, vulns int64
		tool           string
	}{"SECRET": {30, 0, "gitleaks"}, "VULNERABILITY": {0, 20, "osv-scanner"}}
	for _, id := range s.ScanIDs {
		resp, body := do(t, "GET", fmt.Sprintf("%s/pr/scan/%d", e.api, id), e.admin, "")
		var sc struct {
			ScanType     string `json:"scan_type"`
			Status       string `json:"status"`
			Secrets      int64  `json:"secret_count"`
			Vulns        int64  `json:"vulnerability_count"`
			BlockStatus  bool   `json:"block_status"`
			OtherDetails struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"other_details"`
			PR struct {
				PrID int64 `json:"pr_id"`
			} `json:"pr"`
		}
		_ = json.Unmarshal([]byte(body), &sc)
		w := want[sc.ScanType]
		if resp.StatusCode != 200 || sc.Secrets != w.secrets || sc.Vulns != w.vulns || !sc.BlockStatus || sc.Status != "completed" ||
			sc.PR.PrID != 7 || len(sc.OtherDetails.Tools) != 1 || sc.OtherDetails.Tools[0].Name != w.tool {
			t.Errorf("scan %d: %d %s", id, resp.StatusCode, body)
		}
		delete(want, sc.ScanType)
	}
	if len(want) != 0 {
		t.Errorf("no scan of %v", want)
	}
	// Each scan has its scan.record entry, naming the user and the token
	// that created the upload (the ingest function has no caller of its own).
	resp, body := do(t, "GET", e.api+"/audit?action=scan.record", e.admin, "")
	var audit struct {
		Items []struct {
			Actor struct {
				UserID  int64 `json:"user_id"`
				TokenID int64 `json:"token_id"`
			}
			Target    struct{ Type, ID string }
			RequestID string `json:"request_id"`
		}
	}
	if err := json.Unmarshal([]byte(body), &audit); err != nil || resp.StatusCode != 200 || len(audit.Items) != 2 {
		t.Fatalf("scan.record entries: %d %s", resp.StatusCode, body)
	}
	for _, a := range audit.Items {
		if a.Actor.UserID != 1 || a.Actor.TokenID == 0 || a.Target.Type != "scan" || a.RequestID != "upload-"+strconv.FormatInt(c.ID, 10) ||
			!slices.Contains(s.ScanIDs, func() int64 { n, _ := strconv.ParseInt(a.Target.ID, 10, 64); return n }()) {
			t.Errorf("entry %+v", a)
		}
	}
	e.objectGone(t, c.ID)
	e.check(t, 2)
	// A body that carries the log itself is refused: it goes to the URL.
	resp, body = do(t, "POST", e.api+"/pr/scan/sarif/uploads", e.admin, `{"vc_type":"github","vc_id":10,"vc_name":"acme",`+
		`"repo_id":100,"repo_name":"acme/api","webhook_id":3,"pr":{"pr_id":7,"pr_name":"n","pr_link":"l"},"sarif":{}}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `"/sarif"`) {
		t.Errorf("an envelope with sarif: %d %s", resp.StatusCode, body)
	}
}

// TestUploadFailures: a log that is not gzip, not SARIF 2.1.0, or over a
// limit of its results ends failed, with the problem POST /pr/scan/sarif
// would answer, and records nothing.
func TestUploadFailures(t *testing.T) {
	e := startUploads(t, nil)
	tooManyResults := bytes.Replace(sarifLog(0, 100_001, "x"), []byte(`"name":"osv-scanner"`), []byte(`"name":"trivy"`), 1)
	manyRuns := []byte(`{"version":"2.1.0","runs":[` + strings.Repeat(`{"tool":{"driver":{"name":"semgrep"}},"results":[]},`, 20) +
		`{"tool":{"driver":{"name":"semgrep"}},"results":[]}]}`)
	cases := []struct {
		name   string
		object []byte
		status int
		detail string
		ptr    string
	}{
		{"not gzip", []byte(`{"version":"2.1.0","runs":[]}`), 400, "is not valid gzip", ""},
		{"not JSON", gz(t, []byte(`{"version":"2.1.0","runs":[`)), 400, "", ""},
		{"not SARIF 2.1.0", gz(t, []byte(`{"version":"2.0.0","runs":[]}`)), 422, "not SARIF 2.1.0", "/version"},
		{"a result of the wrong shape", gz(t, []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"locations":7}]}]}`)),
			422, "not SARIF 2.1.0", "/runs/0/results/0/locations"},
		{"over 100,000 results", gz(t, tooManyResults), 413, "more than 100000 results", ""},
		{"over 20 runs", gz(t, manyRuns), 413, "more than 20 runs", ""},
	}
	for i, c := range cases {
		up := e.create(t, 100+i)
		if code, body := put(t, up.UploadURL, up.UploadHeaders, c.object); code != http.StatusOK {
			t.Fatalf("%s: PUT %d %s", c.name, code, body)
		}
		s := e.await(t, up.ID)
		if s.Status != "failed" || len(s.Errors) != 1 || len(s.ScanIDs) != 0 || s.CompletedAt == nil {
			t.Errorf("%s: %+v", c.name, s)
			continue
		}
		p := s.Errors[0]
		if p.Status != c.status || !strings.Contains(p.Detail, c.detail) || p.Title == "" ||
			c.ptr != "" && (len(p.Errors) != 1 || p.Errors[0].Pointer != c.ptr) {
			t.Errorf("%s: the problem is %+v", c.name, p)
		}
		e.objectGone(t, up.ID)
	}
	e.check(t, 0)
}

// TestUploadObjectLimit: an object over the limit ends failed (413) before
// any of it is read as a log, and records nothing: at a limit lowered by
// configuration, and at the real 100 MiB.
func TestUploadObjectLimit(t *testing.T) {
	t.Run("lowered", func(t *testing.T) {
		e := startUploads(t, func(o *localstack.Options) { o.UploadMaxBytes = 4096 })
		obj := gz(t, sarifLog(2000, 0, "big"))
		if len(obj) <= 4096 {
			t.Fatalf("the object is only %d bytes", len(obj))
		}
		up := e.create(t, 1)
		if code, body := put(t, up.UploadURL, up.UploadHeaders, obj); code != http.StatusOK {
			t.Fatalf("PUT %d %s", code, body)
		}
		s := e.await(t, up.ID)
		if s.Status != "failed" || len(s.Errors) != 1 || s.Errors[0].Status != 413 ||
			s.Errors[0].Detail != "the uploaded object holds more than 4096 bytes (limit object_bytes)" {
			t.Errorf("%+v", s)
		}
		// A log within the limit is recorded.
		small := e.create(t, 2)
		if code, body := put(t, small.UploadURL, small.UploadHeaders, gz(t, sarifLog(3, 0, "small"))); code != http.StatusOK {
			t.Fatalf("PUT %d %s", code, body)
		}
		if s := e.await(t, small.ID); s.Status != "complete" || s.Recorded != 3 || len(s.ScanIDs) != 2 {
			t.Errorf("%+v", s)
		}
		e.check(t, 2) // gitleaks' 3 secrets, and osv-scanner's clean scan
	})
	t.Run("100 MiB", func(t *testing.T) {
		e := startUploads(t, nil)
		up := e.create(t, 1)
		obj := make([]byte, 100<<20+1)
		copy(obj, gz(t, sarifLog(1, 0, "huge")))
		if code, body := put(t, up.UploadURL, up.UploadHeaders, obj); code != http.StatusOK {
			t.Fatalf("PUT %d %s", code, body)
		}
		s := e.await(t, up.ID)
		if s.Status != "failed" || len(s.Errors) != 1 || s.Errors[0].Status != 413 ||
			s.Errors[0].Detail != "the uploaded object holds more than 104857600 bytes (limit object_bytes)" {
			t.Errorf("%+v", s)
		}
		e.objectGone(t, up.ID)
		e.check(t, 0)
	})
}

// s3Event is the ObjectCreated event S3 sends for an upload's object.
func s3Event(t testing.TB, bucket string, id int64, size int) []byte {
	t.Helper()
	b, err := json.Marshal(events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: "us-east-1", EventTime: time.Now().UTC(), EventName: "ObjectCreated:Put",
		S3: events.S3Entity{SchemaVersion: "1.0", ConfigurationID: "Uploaded", Bucket: events.S3Bucket{Name: bucket, Arn: "arn:aws:s3:::" + bucket},
			Object: events.S3Object{Key: scangate.UploadKey(id), Size: int64(size), Sequencer: "0055AED6DCD90281E5"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUploadDeliveries: S3 delivers an event at least once. The same event
// delivered twice, twice at once, after a delivery that died holding the
// upload, or while another still holds it, records the scans once.
func TestUploadDeliveries(t *testing.T) {
	// The stack lists the bucket once, at its start, and then not for an
	// hour: this test delivers the events itself.
	e := startUploads(t, func(o *localstack.Options) { o.NotifyInterval = time.Hour })
	ctx := context.Background()
	obj := gz(t, sarifLog(4, 3, "twice"))
	upload := func(pr int) int64 {
		up := e.create(t, pr)
		if code, body := put(t, up.UploadURL, up.UploadHeaders, obj); code != http.StatusOK {
			t.Fatalf("PUT %d %s", code, body)
		}
		return up.ID
	}
	invoke := func(id int64) {
		if _, err := e.stack.Invoke(ctx, "IngestSarifUploadFunction", s3Event(t, e.stack.Bucket.Name(), id, len(obj))); err != nil {
			t.Errorf("delivery of upload %d: %v", id, err)
		}
	}
	complete := func(name string, id int64) {
		if s := e.status(t, id); s.Status != "complete" || len(s.ScanIDs) != 2 || s.Recorded != 7 {
			t.Errorf("%s: %+v", name, s)
		}
	}

	twice := upload(1)
	invoke(twice)
	invoke(twice)
	complete("twice", twice)
	e.check(t, 2)

	atOnce := upload(2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { invoke(atOnce) })
	}
	wg.Wait()
	complete("at once", atOnce)
	e.check(t, 4)

	// A delivery claimed the upload and died after recording its scans
	// (one commit: the scans and the once key together): its lease has
	// ended. The next delivery takes over, records nothing again, and
	// completes the upload with those scans.
	died := upload(3)
	if _, ok, err := e.db.Store.ClaimUpload(ctx, died, time.Now(), time.Now().Add(-time.Second).UnixMilli()); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	env := scangate.NewScan{VcType: "github", VcID: 10, VcName: "acme", RepoID: 100, RepoName: "acme/api", WebhookID: 3,
		PR: scangate.PRRef{Number: 3, Name: "Big scan", Link: "l"}, Status: "completed"}
	sec, vul := env, env
	sec.Type, sec.Category, sec.Findings = scangate.ScanSecret, "gitleaks", []scangate.Finding{{Name: "sha256:00"}}
	vul.Type, vul.Category = scangate.ScanVulnerability, "semgrep"
	first, _, _, err := e.db.Store.RecordScans(ctx, []scangate.NewScan{sec, vul}, scangate.Who{RequestID: "test"}, time.Now(), fmt.Sprintf("upload#%d", died))
	if err != nil {
		t.Fatal(err)
	}
	invoke(died)
	if s := e.status(t, died); s.Status != "complete" || len(s.ScanIDs) != 2 || s.ScanIDs[0] != first[0].ID || s.ScanIDs[1] != first[1].ID {
		t.Errorf("taken over: %+v; the scans recorded before are %d and %d", s, first[0].ID, first[1].ID)
	}
	e.check(t, 6)

	// Another delivery holds the upload for a second more: this one waits
	// for it, and takes over when its lease ends with the upload still
	// processing.
	held := upload(4)
	if _, ok, err := e.db.Store.ClaimUpload(ctx, held, time.Now(), time.Now().Add(time.Second).UnixMilli()); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	invoke(held)
	complete("held", held)
	e.check(t, 8)
	for _, id := range []int64{twice, atOnce, died, held} {
		e.objectGone(t, id)
	}
}

// TestUploadsAtOnce: 20 uploads created, PUT and processed at once all
// complete, each with its exact counts, and the table holds no drift.
func TestUploadsAtOnce(t *testing.T) {
	e := startUploads(t, nil)
	const n = 20
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			up := e.create(t, 1000+i)
			ids[i] = up.ID
			if code, body := put(t, up.UploadURL, up.UploadHeaders, gz(t, sarifLog(i+1, 2*i+1, strconv.Itoa(i)))); code != http.StatusOK {
				t.Errorf("PUT %d: %d %s", i, code, body)
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		s := e.await(t, id)
		if s.Status != "complete" || s.Results != 3*i+2 || s.Recorded != 3*i+2 || len(s.ScanIDs) != 2 {
			t.Errorf("upload %d: %+v", i, s)
		}
		for _, sid := range s.ScanIDs {
			sc, _, err := e.db.Store.Scan(context.Background(), sid)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := sc.SecretCount+sc.VulnerabilityCount, map[scangate.ScanType]int64{"SECRET": int64(i + 1), "VULNERABILITY": int64(2*i + 1)}[sc.Type]; got != want || sc.PRNumber != int64(1000+i) {
				t.Errorf("upload %d scan %d (%s, PR %d): %d findings counted; want %d", i, sid, sc.Type, sc.PRNumber, got, want)
			}
		}
	}
	e.check(t, 2*n)
}

// TestUploadStrictS3: on the embedded S3 server, as on S3 (make test-s3
// runs it on S3Proxy), a PUT with a tampered signature, with
// a header other than the signed one, or after its URL expired is refused,
// and nothing is recorded; the untampered URL then works.
func TestUploadStrictS3(t *testing.T) {
	e := startUploads(t, nil)
	up := e.create(t, 1)
	obj := gz(t, sarifLog(2, 2, "strict"))
	u, _ := url.Parse(up.UploadURL)
	q := u.Query()
	sig := q.Get("X-Amz-Signature")
	q.Set("X-Amz-Signature", strings.Repeat("0", len(sig)))
	u.RawQuery = q.Encode()
	code, body := put(t, u.String(), up.UploadHeaders, obj)
	refused(t, "a tampered signature", code, body, "SignatureDoesNotMatch")
	code, body = put(t, up.UploadURL, map[string]string{"Content-Type": "application/json"}, obj)
	refused(t, "another Content-Type", code, body, "SignatureDoesNotMatch")

	// The same PUT presigned for one second, sent after it expired.
	rawURL, headers, _, err := e.stack.Bucket.PresignPut(context.Background(), scangate.UploadKey(up.ID), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	code, body = put(t, rawURL, headers, obj)
	refused(t, "an expired URL", code, body, "Request has expired")

	e.refusedThenPut(t, up, obj)
}

// refusedThenPut: after refused PUTs, up still awaits its object, the
// bucket holds none and no scan is recorded; then up's URL as created
// works and obj (2 secrets, 2 vulns) is recorded.
func (e uploadEnv) refusedThenPut(t *testing.T, up created, obj []byte) {
	t.Helper()
	// The stack lists the bucket every 50 ms: ten rounds find nothing.
	time.Sleep(500 * time.Millisecond)
	if s := e.status(t, up.ID); s.Status != "awaiting_upload" || len(s.ScanIDs) != 0 {
		t.Errorf("upload %d after refused PUTs: %+v", up.ID, s)
	}
	if _, _, err := e.stack.Bucket.Open(context.Background(), scangate.UploadKey(up.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the bucket holds upload %d's object after refused PUTs: %v", up.ID, err)
	}
	e.check(t, 0)

	if code, body := put(t, up.UploadURL, up.UploadHeaders, obj); code != http.StatusOK {
		t.Fatalf("upload %d's URL as created: %d %s", up.ID, code, body)
	}
	if s := e.await(t, up.ID); s.Status != "complete" || s.Recorded != 4 {
		t.Errorf("%+v", s)
	}
	e.check(t, 2)
}

// refused wants an S3 answer of 403 whose body names want.
func refused(t *testing.T, what string, code int, body, want string) {
	t.Helper()
	if code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("%s: %d %s; want 403 %s", what, code, body, want)
	}
}

// TestUploadForeignSignatures: the bucket admits only what S3 admits for
// the stack's credentials. Upload 2's signed URL with upload 1's path, a
// PUT with no signature, a URL signed an hour ago (for 15 minutes) and an
// unsigned listing of the bucket are refused with 403, and upload 1 stays
// awaiting its object: nothing stored, no scan recorded.
func TestUploadForeignSignatures(t *testing.T) {
	e := startUploads(t, nil)
	one, two := e.create(t, 1), e.create(t, 2)
	obj := gz(t, sarifLog(2, 2, "foreign"))

	stolen, _ := url.Parse(two.UploadURL)
	target, _ := url.Parse(one.UploadURL)
	stolen.Path, stolen.RawPath = target.Path, target.RawPath
	code, body := put(t, stolen.String(), two.UploadHeaders, obj)
	refused(t, "upload 2's signature on upload 1's path", code, body, "SignatureDoesNotMatch")

	bare := *target
	bare.RawQuery = ""
	code, body = put(t, bare.String(), one.UploadHeaders, obj)
	refused(t, "no signature", code, body, "AccessDenied")

	// Upload 1's PUT, signed by the stack's credentials an hour ago.
	opts := e.stack.Bucket.Client().Options()
	creds, err := opts.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	past := bare
	past.RawQuery = "X-Amz-Expires=900"
	req, err := http.NewRequest(http.MethodPut, past.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", one.UploadHeaders["Content-Type"])
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", opts.Region,
		time.Now().Add(-time.Hour), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	code, body = put(t, signed, one.UploadHeaders, obj)
	refused(t, "a URL signed an hour ago for 15 minutes", code, body, "Request has expired")

	for _, path := range []string{"/", "/" + e.stack.Bucket.Name()} {
		resp, err := http.Get(target.Scheme + "://" + target.Host + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		refused(t, "an unsigned GET "+path, resp.StatusCode, string(b), "AccessDenied")
	}

	e.refusedThenPut(t, one, obj)
}

// TestReadmeUploadFlow runs the README's large-upload commands, as
// written, against the local server.
func TestReadmeUploadFlow(t *testing.T) {
	got := runReadmeBlock(t, "upload-flow", "gzip")
	for _, want := range []string{
		`"status":"awaiting_upload","upload_url":"http://127.0.0.1:`,
		`"upload_headers":{"Content-Type":"application/gzip"}`,
		`"status":"complete","errors":[],"scan_ids":[`,
		`"results":1,"recorded":1`,
		`"scan_type":"SECRET"`, `"tools":[{"name":"gitleaks","version":"8.30.1"}]`, `"secret_count":1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %s:\n%s", want, got)
		}
	}
}
