package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/ddbtest"
	"github.com/scangate/scangate/pkg/fold"
	"github.com/scangate/scangate/pkg/scangate"
)

// harness runs the real handlers on a store on a fresh table.
type harness struct {
	t     testing.TB
	env   *ddbtest.Env
	admin scangate.Caller
	// fns are the REST proxy handlers of api.Operations(), by the name of
	// their function (create-user, get-scan, ...).
	fns      map[string]api.Handler
	requests atomic.Int64
}

const adminPassword = "admin-password-123"

func newHarness(t testing.TB) *harness {
	t.Helper()
	env := ddbtest.New(t)
	admin, err := auth.Bootstrap{Store: env.Store, Passwords: password.Argon2id{}, Fold: fold.Fold, Who: scangate.Who{RequestID: "test-bootstrap"}}.Admin(context.Background(), "admin", "admin@example.com", adminPassword)
	if err != nil {
		t.Fatal(err)
	}
	deps := api.Deps{
		Store: env.Store, Log: slog.New(slog.NewJSONHandler(testWriter{t}, nil)), Now: time.Now,
		Config:    config.Config{Table: env.Table, TokenTTL: time.Hour, CursorKey: []byte("a cursor key of 32 bytes or more, for tests")},
		Passwords: password.Argon2id{}, Fold: fold.Fold,
	}
	h := &harness{t: t, env: env, admin: scangate.Caller{ID: admin.ID, Username: admin.Username, Role: admin.Role}, fns: map[string]api.Handler{}}
	for _, op := range api.Operations() {
		if op.API != nil {
			h.fns[op.Name] = op.API(deps)
		}
	}
	return h
}

// member stores a user of the role and returns it as a caller whose token
// was issued now.
func (h *harness) member(name string, role scangate.Role) scangate.Caller {
	h.t.Helper()
	at := scangate.At(time.Now())
	u, err := h.env.Store.CreateUser(context.Background(), scangate.User{Username: name, Email: name + "@example.com",
		Role: role, Active: true, PasswordHash: "x", CreatedAt: at, UpdatedAt: at}, scangate.Who{RequestID: "test"})
	if err != nil {
		h.t.Fatal(err)
	}
	return scangate.Caller{ID: u.ID, Username: u.Username, Role: u.Role, IssuedAt: time.Now()}
}

// testWriter sends log lines to the test's log, shown when it fails.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
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
	ev := events.APIGatewayProxyRequest{Body: r.body, Headers: r.headers, PathParameters: r.params}
	if r.caller != nil {
		ev.RequestContext.Authorizer = map[string]any{
			"principalId": strconv.FormatInt(r.caller.ID, 10),
			"user_id":     strconv.FormatInt(r.caller.ID, 10),
			"username":    r.caller.Username,
			"role":        string(r.caller.Role),
			"token_id":    strconv.FormatInt(r.caller.TokenID, 10),
			"issued_at":   strconv.FormatInt(r.caller.IssuedAt.UnixMilli(), 10),
		}
		if r.caller.Scope != "" {
			ev.RequestContext.Authorizer["scope"] = r.caller.Scope
		}
	}
	ev.RequestContext.RequestID = "req-" + strconv.FormatInt(h.requests.Add(1), 10)
	ev.RequestContext.Identity.SourceIP = "192.0.2.7"
	handle, ok := h.fns[fn]
	if !ok {
		h.t.Fatalf("no operation %q: handlers are named by their directory under functions/", fn)
	}
	resp, err := handle(context.Background(), ev)
	if err != nil {
		h.t.Fatalf("%s returned an error to Lambda: %v", fn, err)
	}
	return resp
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
