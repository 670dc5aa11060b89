package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// harness runs the real handlers on a store on a fresh table.
type harness struct {
	t     testing.TB
	env   *ddbtest.Env
	admin scangate.Caller
	// fns are the REST proxy handlers of ops.Operations() built so far, by
	// the name of their function (create-user, get-scan, ...).
	fns      map[string]api.Handler
	mu       sync.Mutex
	log      *slog.Logger
	bucket   *bucket.Bucket
	requests atomic.Int64
	localstack.EventDeps
	// bearer is the secret of each token a caller of the harness
	// presents, by token id: writes check the token a request carries.
	bearer map[int64]string
	// store is the functions' store (env.Store unless a test sets one);
	// queue the sender of dispatched work (nil: all runs in place).
	store *store.Store
	queue work.Sender
}

const adminPassword = "admin-password-123"

func newHarness(t testing.TB) *harness {
	t.Helper()
	env := ddbtest.New(t)
	admin, err := auth.Bootstrap{Store: env.Store, Passwords: password.Argon2id{}, Fold: emailfold.Fold, Who: scangate.Who{RequestID: "test-bootstrap"}}.Admin(context.Background(), "admin", "admin@example.com", adminPassword)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, env: env, store: env.Store, fns: map[string]api.Handler{}, bearer: map[int64]string{},
		log: slog.New(slog.NewJSONHandler(testWriter{t}, nil)), EventDeps: localstack.NewEventDeps()}
	h.admin = h.issue(admin)
	return h
}

// harnessTokens is the request id of the audit entries of the tokens the
// harness issues.
const harnessTokens = "test-token"

// issue stores a login token of the user, issued now, and returns the
// caller it makes, as the authorizer would answer for it.
func (h *harness) issue(u scangate.User) scangate.Caller {
	h.t.Helper()
	secret, err := auth.NewToken(u.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	now := scangate.At(time.Now()).Time
	tok := scangate.Token{Hash: auth.HashToken(secret), UserID: u.ID, Kind: scangate.TokenLogin, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := h.env.Store.PutToken(context.Background(), tok, scangate.Who{RequestID: harnessTokens}); err != nil {
		h.t.Fatal(err)
	}
	c, err := h.callerOf(secret)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// callerOf runs the authorizer for a token and returns the caller it
// answers for, whose requests then present the token.
func (h *harness) callerOf(secret string) (scangate.Caller, error) {
	ctx, err := h.authorizeContext(secret)
	if err != nil {
		return scangate.Caller{}, err
	}
	var c scangate.Caller
	var issued int64
	_, _ = fmt.Sscan(ctx["user_id"].(string), &c.ID)
	_, _ = fmt.Sscan(ctx["token_id"].(string), &c.TokenID)
	_, _ = fmt.Sscan(ctx["issued_at"].(string), &issued)
	c.Username, c.Role, c.Scope, c.IssuedAt = ctx["username"].(string), scangate.Role(ctx["role"].(string)), ctx["scope"].(string), time.UnixMilli(issued)
	if s, ok := ctx["repos"].(string); ok {
		if c.Repos, ok = scangate.ParseRepos(s); !ok || c.Repos == nil {
			return scangate.Caller{}, fmt.Errorf("the authorizer's repos %q", s)
		}
	}
	h.mu.Lock()
	h.bearer[c.TokenID] = secret
	h.mu.Unlock()
	return c, nil
}

// fn is the REST proxy handler of the table's function name, built on
// first use with the harness's dependencies, as the local stack builds it.
func (h *harness) fn(name string) api.Handler {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns[name] == nil {
		for _, op := range ops.Operations() {
			if op.Name == name && op.API != nil {
				h.fns[name] = op.API(h)
			}
		}
	}
	if h.fns[name] == nil {
		h.t.Fatalf("no operation %q: handlers are named by their directory under functions/", name)
	}
	return h.fns[name]
}

// The harness's dependencies (ops.Deps): its store, a log the test shows
// when it fails, the clock, and, on first use, an uploads bucket on the
// embedded S3 server (whose client is its S3).

func (h *harness) Store() *store.Store    { return h.store }
func (h *harness) WorkQueue() work.Sender { return h.queue }
func (h *harness) SSOSecret() func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return "", fmt.Errorf("the harness has no single sign-on") }
}
func (h *harness) Log() *slog.Logger { return h.log }
func (h *harness) Now() time.Time    { return time.Now() }
func (h *harness) S3() *s3.Client    { return h.Bucket().Client() }
func (h *harness) Config() config.Config {
	return config.Config{Table: h.env.Table, TokenTTL: time.Hour, UploadMaxBytes: config.MaxUploadBytes}
}

func (h *harness) Cursors() api.Cursors {
	c, err := api.NewCursors([]byte("a cursor key of 32 bytes or more, for tests"))
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) Bucket() *bucket.Bucket {
	if h.bucket == nil {
		srv, err := localstack.StartEmbeddedS3(awsclient.Placeholders())
		if err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { _ = srv.Close() })
		env := map[string]string{"UPLOADS_BUCKET": "harness", "S3_ENDPOINT": srv.URL}
		if h.bucket, err = bucket.Open(func(k string) string { return env[k] }); err != nil {
			h.t.Fatal(err)
		}
		name := "harness"
		if _, err := h.bucket.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
			h.t.Fatal(err)
		}
	}
	return h.bucket
}

// member stores a user of the role and returns it as a caller with a
// token issued now.
func (h *harness) member(name string, role scangate.Role) scangate.Caller {
	h.t.Helper()
	at := scangate.At(time.Now())
	u, err := h.env.Store.CreateUser(context.Background(), scangate.User{Username: name, Email: name + "@example.com",
		Role: role, Active: true, PasswordHash: "x", CreatedAt: at, UpdatedAt: at}, scangate.Who{RequestID: "test"})
	if err != nil {
		h.t.Fatal(err)
	}
	return h.issue(u)
}

// testWriter sends log lines to the test's log, shown when it fails.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	if metrics.IsEMF(b) {
		if err := metrics.Check(bytes.TrimSpace(b)); err != nil {
			w.t.Errorf("a metric line breaks the embedded metric format: %v", err)
		}
	}
	return len(b), nil
}

// request is one API call.
type request struct {
	caller  *scangate.Caller
	params  map[string]string
	body    string
	headers map[string]string
}

func jsonReq(c *scangate.Caller, body string) request {
	return request{caller: c, body: body, headers: map[string]string{"Content-Type": "application/json"}}
}

func (h *harness) call(fn string, r request) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.callWith(r, fn, nil)
}

// callWith is call with more members of the authorizer's answer.
func (h *harness) callWith(r request, fn string, answer map[string]any) events.APIGatewayProxyResponse {
	h.t.Helper()
	ev := events.APIGatewayProxyRequest{Body: r.body, Headers: r.headers, PathParameters: r.params}
	h.present(&ev, r.caller)
	for k, v := range answer {
		ev.RequestContext.Authorizer[k] = v
	}
	ev.RequestContext.RequestID = "req-" + strconv.FormatInt(h.requests.Add(1), 10)
	ev.RequestContext.Identity.SourceIP = "192.0.2.7"
	resp, err := h.fn(fn)(context.Background(), ev)
	if err != nil {
		h.t.Fatalf("%s returned an error to Lambda: %v", fn, err)
	}
	return resp
}

// present makes ev a request of the caller c (none when nil): the
// authorizer's answer in its context, and its token, when the harness
// issued one, in its Authorization header.
func (h *harness) present(ev *events.APIGatewayProxyRequest, c *scangate.Caller) {
	if c == nil {
		return
	}
	ev.RequestContext.Authorizer = map[string]any{
		"principalId": strconv.FormatInt(c.ID, 10),
		"user_id":     strconv.FormatInt(c.ID, 10),
		"username":    c.Username,
		"role":        string(c.Role),
		"token_id":    strconv.FormatInt(c.TokenID, 10),
		"issued_at":   strconv.FormatInt(c.IssuedAt.UnixMilli(), 10),
	}
	if c.Scope != "" {
		ev.RequestContext.Authorizer["scope"] = c.Scope
	}
	if c.Repos != nil {
		ev.RequestContext.Authorizer["repos"] = scangate.FormatRepos(c.Repos)
	}
	h.mu.Lock()
	secret, ok := h.bearer[c.TokenID]
	h.mu.Unlock()
	if ok && c.TokenID != 0 && header(*ev, "Authorization") == "" {
		ev.Headers = maps.Clone(ev.Headers)
		if ev.Headers == nil {
			ev.Headers = map[string]string{}
		}
		ev.Headers["Authorization"] = "Bearer " + secret
	}
}

// header is a header of ev, matched ignoring case.
func header(ev events.APIGatewayProxyRequest, name string) string {
	for k, v := range ev.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// decode parses a JSON response body into a map.
func decode(t testing.TB, resp events.APIGatewayProxyResponse) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", resp.Body, err)
	}
	return m
}

// expectProblem checks a problem+json answer and returns its pointers.
func expectProblem(t *testing.T, resp events.APIGatewayProxyResponse, status int) []string {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, body %s; want %d", resp.StatusCode, resp.Body, status)
	}
	if ct := resp.Headers["Content-Type"]; ct != "application/problem+json" {
		t.Fatalf("Content-Type %q; want application/problem+json", ct)
	}
	var p struct {
		Type, Title, Detail string
		Status              int
		Errors              []struct{ Pointer, Detail string }
	}
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatal(err)
	}
	if p.Status != status || p.Type != "about:blank" || p.Title == "" || p.Detail == "" {
		t.Fatalf("problem %s is incomplete", resp.Body)
	}
	var ptrs []string
	for _, e := range p.Errors {
		ptrs = append(ptrs, e.Pointer)
	}
	return ptrs
}

// items returns every item of the table.
func (h *harness) items() []map[string]string {
	h.t.Helper()
	out, err := h.env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &h.env.Table})
	if err != nil {
		h.t.Fatal(err)
	}
	var all []map[string]string
	for _, it := range out.Items {
		m := map[string]string{}
		for k, v := range it {
			b, _ := json.Marshal(v)
			m[k] = string(b)
		}
		all = append(all, m)
	}
	return all
}

// countUsers counts the stored user records.
func (h *harness) countUsers() int {
	n := 0
	for _, it := range h.items() {
		if it["SK"] == `{"Value":"USER"}` {
			n++
		}
	}
	return n
}
