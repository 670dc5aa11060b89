package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scangate/scangate/pkg/client"
)

const token = "sgt_1_secret-token-value"

var env = client.Envelope{VcType: "github", VcID: 1, VcName: "github.com", RepoID: 186853002, RepoName: "Codertocat/Hello-World",
	WebhookID: 1, PR: client.PRRef{Number: 2, Name: "Update the README", Link: "https://github.com/Codertocat/Hello-World/pull/2"}}

func newClient(t *testing.T, h http.HandlerFunc) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+"/api/", token, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The inline body is the envelope's members and "sarif", base64 of the
// gzip, and InlineSize says its length exactly, so that the choice
// between inline and presigned falls exactly at the service's limit.
func TestInlineBody(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 1000, 4_499_000} {
		gz := bytes.Repeat([]byte{0x1f}, n)
		body, err := client.InlineBody(env, gz)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := json.Marshal(env)
		if got := client.InlineSize(len(e), n); got != len(body) {
			t.Errorf("gzip of %d bytes: InlineSize %d, body %d", n, got, len(body))
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("gzip of %d bytes: the body is not JSON: %v", n, err)
		}
		if m["sarif"] != base64.StdEncoding.EncodeToString(gz) || m["repo_name"] != "Codertocat/Hello-World" {
			t.Errorf("gzip of %d bytes: members %v", n, m["repo_name"])
		}
	}
	e, _ := json.Marshal(env)
	largest := 0
	for n := (client.MaxInlineBody-len(e))*3/4 - 100; client.InlineSize(len(e), n+1) <= client.MaxInlineBody; n++ {
		largest = n + 1
	}
	if largest == 0 {
		t.Fatal("no gzip size fits the limit")
	}
	if ok, _ := client.FitsInline(env, largest); !ok || client.InlineSize(len(e), largest) > client.MaxInlineBody {
		t.Errorf("a gzip of %d bytes (body %d) does not go inline", largest, client.InlineSize(len(e), largest))
	}
	if ok, _ := client.FitsInline(env, largest+1); ok {
		t.Errorf("a gzip of %d bytes (body %d) goes inline", largest+1, client.InlineSize(len(e), largest+1))
	}
}

// A scan is of a pull request or of a branch: the envelope sends exactly
// one of pr and branch, and a base only when it has one.
func TestEnvelopePROrBranch(t *testing.T) {
	keys := func(e client.Envelope) string {
		b, err := json.Marshal(e)
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("%s %v", b, err)
		}
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, " ")
	}
	if got := keys(env); got != "pr repo_id repo_name vc_id vc_name vc_type webhook_id" {
		t.Errorf("a pull request's envelope: %s", got)
	}
	pr := env
	pr.BaseRef, pr.BaseSHA = "main", strings.Repeat("a", 40)
	if got := keys(pr); got != "base_ref base_sha pr repo_id repo_name vc_id vc_name vc_type webhook_id" {
		t.Errorf("a pull request's envelope with its base: %s", got)
	}
	branch := client.Envelope{VcType: "github", VcID: 1, VcName: "github.com", RepoID: 5, RepoName: "o/r", WebhookID: 1, Branch: "main", CommitSHA: strings.Repeat("b", 40)}
	if got := keys(branch); got != "branch commit_sha repo_id repo_name vc_id vc_name vc_type webhook_id" {
		t.Errorf("a branch analysis's envelope: %s", got)
	}
}

// An error answer is the service's problem details, every pointer and
// parameter kept; the message names the route, not the token.
func TestProblem(t *testing.T) {
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/api/pr/scan/sarif" {
			t.Errorf("request %s %s", r.URL.Path, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(422)
		fmt.Fprint(w, `{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"the SARIF log is not SARIF 2.1.0 as scangate reads it",`+
			`"errors":[{"pointer":"/sarif/runs/0/results/7/locations","detail":"must be an array"},{"pointer":"","detail":"whole"},{"parameter":"limit","detail":"too big"}]}`)
	})
	_, err := c.RecordSARIF(context.Background(), env, []byte{1, 2, 3})
	want := "POST /pr/scan/sarif: 422 Unprocessable Entity: the SARIF log is not SARIF 2.1.0 as scangate reads it\n" +
		"  /sarif/runs/0/results/7/locations: must be an array\n  (the whole document): whole\n  parameter limit: too big"
	if err == nil || err.Error() != want || client.StatusOf(err) != 422 {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// An error answer that is not problem details (a proxy's page) keeps its
// status and the start of its body.
func TestNotProblem(t *testing.T) {
	c := newClient(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(502)
		fmt.Fprint(w, "<html>Bad Gateway</html>")
	})
	_, err := c.Scan(context.Background(), 1)
	if err == nil || err.Error() != "GET /pr/scan/1: 502 Bad Gateway: <html>Bad Gateway</html>" {
		t.Errorf("error: %v", err)
	}
}

// 503 and 429 say nothing was done: the request is sent again after
// Retry-After, at most three times in all.
func TestRetry(t *testing.T) {
	var calls atomic.Int32
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !bytes.Contains(b, []byte(`"name":"ci"`)) {
			t.Errorf("attempt %d: body %s", calls.Load()+1, b)
		}
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
		default:
			w.WriteHeader(201)
			fmt.Fprint(w, `{"id":3,"name":"ci","scope":"write","access_token":"sgt_new"}`)
		}
	})
	tok, err := c.CreateToken(context.Background(), client.TokenRequest{Name: "ci"})
	if err != nil || tok.AccessToken != "sgt_new" || calls.Load() != 3 {
		t.Errorf("after %d calls: %+v %v", calls.Load(), tok, err)
	}
	calls.Store(0)
	c = newClient(t, func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(503)
	})
	_, err = c.CreateToken(context.Background(), client.TokenRequest{Name: "ci"})
	if client.StatusOf(err) != 503 || calls.Load() != 3 {
		t.Errorf("a service that stays unavailable: %v after %d calls", err, calls.Load())
	}
}

// A service that does not answer is an UnreachableError naming the API.
func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c, err := client.New(srv.URL+"/api", token, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Gate(context.Background(), 1)
	var ue *client.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the service at "+srv.URL+"/api did not answer") || strings.Contains(err.Error(), token) {
		t.Errorf("error: %v", err)
	}
	for _, base := range []string{"", "127.0.0.1:3000/api", "ftp://x/api"} {
		if _, err := client.New(base, token, "", nil); err == nil {
			t.Errorf("base %q: no error", base)
		}
	}
}

// The presigned URL is a credential: an error of its PUT never shows its
// query (the signature).
func TestPutUploadRedacts(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c := newClient(t, http.NotFoundHandler().ServeHTTP)
	u := client.CreatedUpload{ID: 9, UploadURL: srv.URL + "/bucket/uploads/9?X-Amz-Signature=deadbeefcafe&X-Amz-Credential=AKIA"}
	err := c.PutUpload(context.Background(), u, bytes.NewReader([]byte("gz")), 2)
	if err == nil || strings.Contains(err.Error(), "deadbeefcafe") || strings.Contains(err.Error(), "AKIA") || !strings.Contains(err.Error(), "upload 9") {
		t.Errorf("error: %v", err)
	}
}

// The PUT sends the upload's headers and the length; S3's error is read.
func TestPutUpload(t *testing.T) {
	var got http.Header
	var size int64
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		got, size = r.Header, r.ContentLength
		if r.Header.Get("Authorization") != "" {
			t.Error("the PUT to the presigned URL carries the bearer token")
		}
		if strings.HasSuffix(r.URL.Path, "/bad") {
			w.WriteHeader(403)
			fmt.Fprint(w, `<?xml version="1.0"?><Error><Code>SignatureDoesNotMatch</Code><Message>The signature does not match</Message></Error>`)
		}
	})
	base := strings.TrimSuffix(c.BaseURL(), "/api")
	u := client.CreatedUpload{ID: 4, UploadURL: base + "/b/k?sig=1", UploadHeaders: map[string]string{"Content-Type": "application/gzip"}}
	if err := c.PutUpload(context.Background(), u, bytes.NewReader([]byte("12345")), 5); err != nil {
		t.Fatal(err)
	}
	if got.Get("Content-Type") != "application/gzip" || size != 5 {
		t.Errorf("PUT headers %v, length %d", got, size)
	}
	u.UploadURL = base + "/b/bad?sig=1"
	err := c.PutUpload(context.Background(), u, bytes.NewReader([]byte("12345")), 5)
	if err == nil || !strings.Contains(err.Error(), "answered 403: SignatureDoesNotMatch The signature does not match") {
		t.Errorf("error: %v", err)
	}
}

// AwaitUpload reads the upload until it is complete or failed.
func TestAwaitUpload(t *testing.T) {
	var reads atomic.Int32
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/pr/scan/sarif/uploads/5" {
			t.Errorf("path %s", r.URL.Path)
		}
		status := "processing"
		if reads.Add(1) == 3 {
			status = "complete"
		}
		fmt.Fprintf(w, `{"id":5,"status":%q,"errors":[],"scan_ids":[7,8],"results":2,"recorded":2}`, status)
	})
	u, err := c.AwaitUpload(context.Background(), 5, client.Poll{First: 1, Max: 2})
	if err != nil || u.Status != "complete" || len(u.ScanIDs) != 2 || reads.Load() != 3 || !strings.Contains(string(u.JSON), `"scan_ids":[7,8]`) {
		t.Errorf("after %d reads: %+v %v", reads.Load(), u, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.AwaitUpload(ctx, 5, client.DefaultPoll); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v", err)
	}
}

// FindPR asks for the pull request by its number.
func TestFindPR(t *testing.T) {
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/api/pr" || q.Get("vc_id") != "1" || q.Get("repo_id") != "101" || len(q) != 3 {
			t.Errorf("request %s", r.URL)
		}
		if q.Get("number") == "12" {
			fmt.Fprint(w, `{"items":[{"id":4,"pr_id":12}],"next_cursor":null}`)
			return
		}
		fmt.Fprint(w, `{"items":[],"next_cursor":null}`)
	})
	pr, err := c.FindPR(context.Background(), 1, 101, 12)
	if err != nil || pr.ID != 4 {
		t.Errorf("PR 12: %+v %v", pr, err)
	}
	if _, err := c.FindPR(context.Background(), 1, 101, 13); !errors.Is(err, client.ErrNoPR) {
		t.Errorf("PR 13: %v", err)
	}
}

// No redirect is followed, for a call of the API (a *RedirectError naming
// the location, without the token) or the PUT of an upload (its log goes to
// the presigned URL only).
func TestNoRedirect(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	c := newClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/api/pr/1/gate?echo="+token, http.StatusFound)
	})
	_, err := c.Gate(context.Background(), 1)
	var re *client.RedirectError
	if !errors.As(err, &re) || re.Status != 302 || re.Location != other.URL+"/api/pr/1/gate?echo=[redacted]" ||
		!strings.Contains(err.Error(), "GET /pr/1/gate: the service answered 302 Found to "+other.URL) {
		t.Errorf("error: %v", err)
	}
	base := strings.TrimSuffix(c.BaseURL(), "/api")
	err = c.PutUpload(context.Background(), client.CreatedUpload{ID: 4, UploadURL: base + "/b/k?sig=1"}, bytes.NewReader([]byte("12345")), 5)
	if err == nil || !strings.Contains(err.Error(), "answered 302") {
		t.Errorf("PUT: %v", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests followed the redirects", n)
	}
}
