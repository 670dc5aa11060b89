package localstack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/metrics"
)

// TestRequestLinesAndMetrics: every request the local stack answers logs
// one JSON line with its level, request id, route (the resource
// template, not the path), actor and duration, and one metric line
// (Requests and Latency by route and status class) that the format's
// rules accept; a revoked token is an authorizer denial by cause. The
// stack's sink checks no line holds the passwords and tokens used.
func TestRequestLinesAndMetrics(t *testing.T) {
	t.Parallel()
	_, api, dir, _, logs := startLogged(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	do(t, "POST", api+"/users", admin, `{"username":"yara","user_email":"yara@example.com","password":"Yara-Secret-Pass-9","role":"user"}`)
	do(t, "GET", api+"/users/2", admin, "")
	do(t, "GET", api+"/users/99", admin, "")
	yara := loginToken(t, api, "yara", "Yara-Secret-Pass-9")
	do(t, "DELETE", api+"/auth/token", yara, "")
	do(t, "GET", api+"/users/2", yara, "")

	var requests []map[string]any
	got := map[string]float64{}
	denied := 0.0
	for _, l := range logs.Lines() {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		if m["msg"] == "request" || m["msg"] == "request refused" {
			requests = append(requests, m)
		}
		if n, ok := m[metrics.Requests].(float64); ok {
			got[m[metrics.DimRoute].(string)+" "+m[metrics.DimStatusClass].(string)] += n
			if _, ok := m[metrics.Latency].(float64); !ok {
				t.Errorf("a request metric without latency: %s", l)
			}
		}
		if n, ok := m[metrics.AuthorizerDenied].(float64); ok && m[metrics.DimCause] == "revoked token" {
			denied += n
		}
	}
	for _, m := range requests {
		for _, k := range []string{"level", "request_id", "route", "duration_ms", "status"} {
			if m[k] == nil || m[k] == "" {
				t.Errorf("request line without %s: %v", k, m)
			}
		}
		if r, _ := m["route"].(string); strings.Contains(r, "/2") || strings.Contains(r, "/99") {
			t.Errorf("route %q holds an id", r)
		}
		if m["route"] != "POST /api/auth/token" && m["user_id"] == nil {
			t.Errorf("request line without its actor: %v", m)
		}
	}
	for route, want := range map[string]float64{"POST /api/users 2xx": 1, "GET /api/users/{user_id} 2xx": 1, "GET /api/users/{user_id} 4xx": 1} {
		if got[route] != want {
			t.Errorf("Requests of %s: %v, want %v (all: %v)", route, got[route], want, got)
		}
	}
	if denied != 1 {
		t.Errorf("%v denials of a revoked token, want 1", denied)
	}
}

// TestLocalHealth: the local stack serves admins the metrics its functions
// logged, added up (the requests answered before, by route and class);
// without a token the route answers 401, to a user 403, both as problem
// details.
func TestLocalHealth(t *testing.T) {
	t.Parallel()
	_, api, dir, _, _ := startLogged(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, dir))
	do(t, "POST", api+"/users", admin, `{"username":"zoe","user_email":"zoe@example.com","password":"Zoe-Secret-Pass-7","role":"user"}`)
	do(t, "GET", api+"/users/99", admin, "")
	resp, body := do(t, "GET", api+"/local/health", admin, "")
	var h localstack.Health
	if err := json.Unmarshal([]byte(body), &h); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	got := map[string]float64{}
	for _, s := range h.Metrics {
		if s.Name == metrics.Requests {
			got[s.Dims[metrics.DimRoute]+" "+s.Dims[metrics.DimStatusClass]] += s.Sum
		}
	}
	if got["POST /api/users 2xx"] != 1 || got["GET /api/users/{user_id} 4xx"] != 1 || h.Since.IsZero() {
		t.Errorf("requests %v since %v", got, h.Since)
	}
	if resp, body := do(t, "GET", api+"/local/health", "", ""); resp.StatusCode != 401 || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("without a token: %d %s", resp.StatusCode, body)
	}
	zoe := loginToken(t, api, "zoe", "Zoe-Secret-Pass-7")
	if resp, body := do(t, "GET", api+"/local/health", zoe, ""); resp.StatusCode != 403 {
		t.Errorf("a user: %d %s", resp.StatusCode, body)
	}
}
