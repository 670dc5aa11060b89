package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

func (h *harness) createToken(c *scangate.Caller, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.call("create-token", jsonReq(c, body))
}

// authorize runs the authorizer on a token and returns its context.
func (h *harness) authorizeContext(token string) (map[string]any, error) {
	a := auth.Authorizer{Store: h.env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	resp, err := a.Handle(context.Background(), events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token,
		MethodArn: "arn:aws:execute-api:us-east-1:1:a/prod/GET/api/x"})
	return resp.Context, err
}

func TestPersonalTokenShape(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.createToken(&h.admin, `{"name":"CI deploy","expires_in_days":30,"scope":"read"}`)
	tok := mustOK(t, resp)
	if resp.StatusCode != 201 || resp.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Headers)
	}
	if !strings.HasSuffix(resp.Headers["Location"], fmt.Sprintf("/api/auth/tokens/%v", tok["id"])) {
		t.Errorf("Location %q", resp.Headers["Location"])
	}
	keys := sortedKeys(tok)
	if !slices.Equal(keys, []string{"access_token", "created_at", "expires_at", "id", "last_used_at", "name", "repos", "scope", "token_type"}) {
		t.Errorf("members %v", keys)
	}
	created, _ := scangate.ParseTime(tok["created_at"].(string))
	expires, _ := scangate.ParseTime(tok["expires_at"].(string))
	if tok["name"] != "CI deploy" || tok["scope"] != "read" || tok["token_type"] != "Bearer" || tok["last_used_at"] != nil || tok["repos"] != nil ||
		expires.Sub(created.Time) != 30*24*time.Hour {
		t.Errorf("token %v", tok)
	}
	secret := tok["access_token"].(string)
	if id, err := auth.ParseToken(secret); err != nil || id != h.admin.ID {
		t.Fatalf("the secret %v does not parse as the admin's token: %v", id, err)
	}
	ctx, err := h.authorizeContext(secret)
	if err != nil || ctx["scope"] != "read" || ctx["token_id"] != fmt.Sprint(tok["id"]) {
		t.Fatalf("the authorizer says %v, %v", ctx, err)
	}
	// Defaults: 90 days, write.
	d := mustOK(t, h.createToken(&h.admin, `{"name":"dashboard"}`))
	c2, _ := scangate.ParseTime(d["created_at"].(string))
	e2, _ := scangate.ParseTime(d["expires_at"].(string))
	if d["scope"] != "write" || e2.Sub(c2.Time) != 90*24*time.Hour {
		t.Errorf("defaults: %v", d)
	}
	// Nothing stored holds the secret.
	for _, it := range h.items() {
		for _, v := range it {
			if strings.Contains(v, secret) {
				t.Fatalf("an item holds the secret: %v", it)
			}
		}
	}
}

func TestPersonalTokenRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.createToken(&h.admin, `{"name":"Ci-Deploy"}`))
	expectProblem(t, h.createToken(&h.admin, `{"name":"ci-DEPLOY"}`), 409)
	for body, ptr := range map[string]string{
		`{}`:          "/name",
		`{"name":""}`: "/name",
		`{"name":"` + strings.Repeat("n", 101) + `"}`: "/name",
		`{"name":"a\u200bb"}`:                         "/name",
		`{"name":"x","expires_in_days":0}`:            "/expires_in_days",
		`{"name":"x","expires_in_days":367}`:          "/expires_in_days",
		`{"name":"x","expires_in_days":1.5}`:          "/expires_in_days",
		`{"name":"x","scope":"admin"}`:                "/scope",
		`{"name":"x","access_token":"mine"}`:          "/access_token",
	} {
		ptrs := expectProblem(t, h.createToken(&h.admin, body), 422)
		if !slices.Contains(ptrs, ptr) {
			t.Errorf("%s: pointers %v; want %s", body, ptrs, ptr)
		}
	}
	// Another user may use the same name.
	u := h.member("uma", scangate.RoleUser)
	mustOK(t, h.createToken(&u, `{"name":"ci-deploy"}`))
}

// TestTwentyOneTokensAtOnce: 21 creates at once, exactly 20 succeed.
func TestTwentyOneTokensAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var wg sync.WaitGroup
	codes := make([]int, 21)
	for i := range codes {
		wg.Go(func() {
			codes[i] = h.createToken(&h.admin, fmt.Sprintf(`{"name":"job-%d"}`, i)).StatusCode
		})
	}
	wg.Wait()
	n := map[int]int{}
	for _, c := range codes {
		n[c]++
	}
	if n[201] != 20 || n[409] != 1 {
		t.Fatalf("statuses %v; want 20 created and one 409", n)
	}
}

// writeRoutes are the template's routes that change something, by the
// directory of their function.
func writeRoutes(t *testing.T) map[string]string {
	b, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Properties struct {
				Events map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Path   string `yaml:"Path"`
						Method string `yaml:"Method"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for id, r := range doc.Resources {
		for _, ev := range r.Properties.Events {
			if ev.Type == "Api" && ev.Properties.Method != "get" {
				out[dirOf(id)] = ev.Properties.Method + " " + ev.Properties.Path
			}
		}
	}
	return out
}

// dirOf turns a logical id back into its function's directory.
func dirOf(logicalID string) string {
	var b strings.Builder
	for i, r := range strings.TrimSuffix(logicalID, "Function") {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestReadTokensMayNotWrite: a read token gets 403 on every route that
// writes, whatever its role (logging out excepted), and nothing changes.
func TestReadTokensMayNotWrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	reader := h.admin
	reader.Scope = scangate.ScopeRead
	before := len(h.items())
	routes := writeRoutes(t)
	if len(routes) < 8 {
		t.Fatalf("only %d write routes found: %v", len(routes), routes)
	}
	for fn, route := range routes {
		switch fn {
		case "login", "logout":
			continue
		}
		r := jsonReq(&reader, `{}`)
		r.params = map[string]string{"user_id": "1", "whitelist_id": "1", "token_id": "1", "upload_id": "1"}
		if resp := h.call(fn, r); resp.StatusCode != 403 {
			t.Errorf("%s (%s) with a read token: %d %s", route, fn, resp.StatusCode, resp.Body)
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused writes stored %d items", after-before)
	}
}

func TestRevokingTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	uma, vic := h.member("uma", scangate.RoleUser), h.member("vic", scangate.RoleReadonly)
	mine := mustOK(t, h.createToken(&uma, `{"name":"mine"}`))
	theirs := mustOK(t, h.createToken(&vic, `{"name":"theirs"}`))
	revoke := func(c *scangate.Caller, id any) events.APIGatewayProxyResponse {
		r := jsonReq(c, "")
		r.params = map[string]string{"token_id": fmt.Sprint(id)}
		return h.call("revoke-token", r)
	}
	// Another user's token is not found for a user who is not an admin.
	expectProblem(t, revoke(&uma, theirs["id"]), 404)
	if _, err := h.authorizeContext(theirs["access_token"].(string)); err != nil {
		t.Fatalf("a refused revocation revoked: %v", err)
	}
	// Its owner revokes it; then it is not found.
	if resp := revoke(&uma, mine["id"]); resp.StatusCode != 204 || resp.Body != "" {
		t.Fatalf("owner: %d %q", resp.StatusCode, resp.Body)
	}
	if _, err := h.authorizeContext(mine["access_token"].(string)); err == nil {
		t.Fatal("a revoked token still authorizes")
	}
	expectProblem(t, revoke(&uma, mine["id"]), 404)
	// An admin revokes another user's token.
	if resp := revoke(&h.admin, theirs["id"]); resp.StatusCode != 204 {
		t.Fatalf("admin: %d %s", resp.StatusCode, resp.Body)
	}
	// The name of a revoked token is free again.
	mustOK(t, h.createToken(&uma, `{"name":"mine"}`))
	// Logging out revokes the token the request carries; a read token may.
	login := decode(t, h.login("admin", adminPassword))
	caller, err := h.callerOf(login["access_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	caller.Scope = scangate.ScopeRead
	if resp := h.call("logout", jsonReq(&caller, "")); resp.StatusCode != 204 {
		t.Fatalf("logout: %d %s", resp.StatusCode, resp.Body)
	}
	if _, err := h.authorizeContext(login["access_token"].(string)); err == nil {
		t.Fatal("a token still authorizes after logging out with it")
	}
	// Logged out, the token writes nothing more (the authorizer's cached
	// answer may still let it reach the function).
	expectProblem(t, h.call("logout", jsonReq(&caller, "")), 401)
}

// auditEntries reads the whole log (or one action's entries), newest first.
func (h *harness) auditEntries(action string) []scangate.AuditEntry {
	h.t.Helper()
	var all []scangate.AuditEntry
	var after map[string]string
	for {
		page, err := h.env.Store.AuditPage(context.Background(), storeFilter(action), 100, after)
		if err != nil {
			h.t.Fatal(err)
		}
		next := page.Next
		for _, e := range page.Items {
			if e.Who.RequestID != harnessTokens { // the harness's own tokens' entries are left out
				all = append(all, e)
			}
		}
		if next == nil {
			return all
		}
		after = next
	}
}

func TestEveryChangeLeavesOneAuditEntry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.call("create-user", jsonReq(&h.admin, createBody("wes", "user"))))
	mustOK(t, h.call("update-user", update(h, "2", `{"role":"readonly","active":true,"user_email":"wes2@example.com"}`)))
	matchingScans(h)
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","repos":[100],"comment":"fixture"}`))
	mustOK(t, h.modify(1, `{"active":false,"vcs":[10,11]}`))
	tok := mustOK(t, h.createToken(&h.admin, `{"name":"ci"}`))
	r := jsonReq(&h.admin, "")
	r.params = map[string]string{"token_id": fmt.Sprint(tok["id"])}
	if resp := h.call("revoke-token", r); resp.StatusCode != 204 {
		t.Fatal(resp.Body)
	}
	decode(t, h.login("wes", "password-of-wes"))
	for range 5 {
		h.login("wes", "wrong-password-1")
	}
	// The whole log, changes and failed logins together, newest first: ids
	// (and so times) never increase down the log; two entries of the same
	// millisecond may come in either order.
	log := h.auditEntries("")
	var changes []scangate.AuditEntry
	var actions []string
	logins := 0
	for i, e := range log {
		if i > 0 && (e.ID >= log[i-1].ID || e.At.After(log[i-1].At.Time)) {
			t.Errorf("entry %d (%s %s) is not older than the one before it (%s %s)", i, e.ID, e.At, log[i-1].ID, log[i-1].At)
		}
		if scangate.LoginAction(e.Action) {
			logins++
			continue
		}
		changes = append(changes, e)
		actions = append(actions, e.Action)
	}
	if logins != 6 {
		t.Errorf("the whole log holds %d failed-login entries; want 5 failures and a lockout", logins)
	}
	want := []string{"token.create", "token.revoke", "token.create", "allowlist.update", "allowlist.create",
		"scan.record", "scan.record", "scan.record", "scan.record", "user.update", "user.create", "admin.bootstrap"}
	slices.Sort(actions)
	slices.Sort(want)
	if !slices.Equal(actions, want) {
		t.Fatalf("the change log holds %v; want one entry of each change, %v", actions, want)
	}
	byAction := map[string]scangate.AuditEntry{}
	for _, e := range changes {
		if _, ok := byAction[e.Action]; !ok {
			byAction[e.Action] = e
		}
	}
	check := func(action, targetType, targetID string, actor int64, changes string) {
		t.Helper()
		e := byAction[action]
		got, _ := json.Marshal(e.Changes)
		if e.Target.Type != targetType || e.Target.ID != targetID || e.Who.RequestID == "" || e.Who.SourceIP != "192.0.2.7" ||
			actor == 0 && e.Who.Actor != nil || actor != 0 && (e.Who.Actor == nil || e.Who.Actor.UserID != actor) || string(got) != changes {
			t.Errorf("%s: %+v %s; want %s %s by %d, changes %s", action, e, got, targetType, targetID, actor, changes)
		}
	}
	check("user.create", "user", "2", 1, `{"active":{"to":true},"role":{"to":"user"},"user_email":{"to":"wes@example.com"},"username":{"to":"wes"}}`)
	check("user.update", "user", "2", 1, `{"role":{"from":"user","to":"readonly"},"user_email":{"from":"wes@example.com","to":"wes2@example.com"}}`)
	check("allowlist.create", "allowlist", "1", 1, `{"active":{"to":true},"comment":{"to":"fixture"},"global_":{"to":false},"name":{"to":"sha256:aa"},"reason":{"to":"false_positive"},"repos":{"from":[],"to":[100]},"type":{"to":"SECRET"}}`)
	check("allowlist.update", "allowlist", "1", 1, `{"active":{"from":true,"to":false},"vcs":{"from":[],"to":[10,11]}}`)
	check("token.revoke", "token", fmt.Sprint(tok["id"]), 1, `{"revoked":{"from":false,"to":true}}`)
	check("scan.record", "scan", "4", 1, `{"category":{"to":"default"},"pr_id":{"to":3},"scan_type":{"to":"SECRET"},"secret_count":{"to":1},"status":{"to":"completed"},"vulnerability_count":{"to":0}}`)
	// The login's token.create is wes's (the other is the admin's personal
	// token, which may fall in the same millisecond, in either order).
	if i := slices.IndexFunc(changes, func(e scangate.AuditEntry) bool {
		return e.Action == "token.create" && e.Who.Actor != nil && e.Who.Actor.UserID == 2
	}); i < 0 || changes[i].Who.Actor.TokenID == 0 || changes[i].Target.Type != "token" {
		t.Errorf("no login's token.create by wes with the token it used, in %+v", changes)
	}
	if e := byAction["admin.bootstrap"]; e.Who.Actor != nil || e.Who.RequestID != "test-bootstrap" {
		t.Errorf("admin.bootstrap: %+v", e)
	}
	// Failed logins are apart: five failures and one lockout, no actor.
	fails, throttled := h.auditEntries("login.failure"), h.auditEntries("login.throttled")
	if len(fails) != 5 || len(throttled) != 1 || fails[0].Who.Actor != nil || fails[0].Target != (scangate.Target{Type: "username", ID: "wes"}) {
		t.Errorf("failed logins: %d %+v, lockouts %d", len(fails), fails, len(throttled))
	}
}

// TestNoEntryWithoutItsChange: a change whose transaction fails leaves
// neither the change nor its entry; concurrent changes each leave one.
func TestNoEntryWithoutItsChange(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fail := func(op string, _ any) error {
		if op == "TransactWriteItems" {
			return errInjected
		}
		return nil
	}
	h.env.Fault.Store(&fail)
	expect503Or500(t, h.call("create-user", jsonReq(&h.admin, createBody("xia", "user"))))
	h.env.Fault.Store(nil)
	if n := len(h.auditEntries("")); n != 1 { // the bootstrap's
		t.Fatalf("%d entries after a failed change; want the bootstrap's alone", n)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { h.call("create-user", jsonReq(&h.admin, createBody(fmt.Sprintf("yan%d", i), "user"))) })
	}
	wg.Wait()
	if n := len(h.auditEntries("")); n != 9 || h.countUsers() != 9 {
		t.Fatalf("%d entries and %d users after 8 concurrent creates; want 9 of each", n, h.countUsers())
	}
}

var errInjected = errors.New("injected failure")

func storeFilter(action string) scangate.AuditFilter { return scangate.AuditFilter{Action: action} }

func expect503Or500(t *testing.T, resp events.APIGatewayProxyResponse) {
	t.Helper()
	if resp.StatusCode != 503 && resp.StatusCode != 500 {
		t.Fatalf("status %d %s; want the failure", resp.StatusCode, resp.Body)
	}
}

// list calls a listing handler with query parameters and returns the
// answer's items and next cursor.
func (h *harness) list(fn string, c *scangate.Caller, query map[string]string) (events.APIGatewayProxyResponse, []any, string) {
	h.t.Helper()
	v := url.Values{}
	for k, val := range query {
		v.Set(k, val)
	}
	resp := h.read(fn, c, nil, v.Encode())
	if resp.StatusCode != 200 {
		return resp, nil, ""
	}
	var page struct {
		Items      []any
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &page); err != nil {
		h.t.Fatal(err)
	}
	next := ""
	if page.NextCursor != nil {
		next = *page.NextCursor
	}
	return resp, page.Items, next
}

func TestListingTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	uma := h.member("uma", scangate.RoleUser)
	var secrets, ids []string
	for i := range 3 {
		tok := mustOK(t, h.createToken(&uma, fmt.Sprintf(`{"name":"t%d"}`, i)))
		secrets, ids = append(secrets, tok["access_token"].(string)), append(ids, fmt.Sprint(tok["id"]))
	}
	// A revoked one is not listed; uma's own login token is.
	r := jsonReq(&uma, "")
	r.params = map[string]string{"token_id": ids[0]}
	if resp := h.call("revoke-token", r); resp.StatusCode != 204 {
		t.Fatal(resp.Body)
	}
	resp, items, _ := h.list("list-tokens", &uma, nil)
	if resp.StatusCode != 200 || len(items) != 3 {
		t.Fatalf("%d %s", resp.StatusCode, resp.Body)
	}
	first := items[0].(map[string]any)
	if first["name"] != "t2" || first["kind"] != "personal" || first["scope"] != "write" || first["last_used_at"] != nil {
		t.Errorf("newest first, without secrets: %v", first)
	}
	for _, s := range secrets {
		if strings.Contains(resp.Body, s) || strings.Contains(resp.Body, auth.HashToken(s)) {
			t.Fatal("the listing shows a token or its hash")
		}
	}
	// Paging, limit 1.
	_, page1, next := h.list("list-tokens", &uma, map[string]string{"limit": "1"})
	_, page2, _ := h.list("list-tokens", &uma, map[string]string{"limit": "1", "cursor": next})
	if len(page1) != 1 || len(page2) != 1 || page1[0].(map[string]any)["id"] == page2[0].(map[string]any)["id"] {
		t.Errorf("pages %v %v", page1, page2)
	}
	// Another user's tokens: an admin may list them, a user may not.
	if _, items, _ := h.list("list-tokens", &h.admin, map[string]string{"user_id": fmt.Sprint(uma.ID)}); len(items) != 3 {
		t.Errorf("an admin listing uma's tokens: %v", items)
	}
	resp, _, _ = h.list("list-tokens", &uma, map[string]string{"user_id": "1"})
	expectProblem(t, resp, 403)
}

func TestListingAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 3 {
		mustOK(t, h.call("create-user", jsonReq(&h.admin, createBody(fmt.Sprintf("ann%d", i), "user"))))
	}
	mustOK(t, h.call("update-user", update(h, "2", `{"role":"readonly","active":true,"user_email":"ann0@example.com"}`)))
	h.login("ann1", "wrong-password-1")
	// Only admins read it.
	ann := h.member("reader", scangate.RoleReadonly)
	resp, _, _ := h.list("list-audit", &ann, nil)
	expectProblem(t, resp, 403)
	// Newest first, walked with limit 2: every entry once, the failed login
	// with the changes.
	var all []map[string]any
	next := ""
	for range 10 {
		q := map[string]string{"limit": "2"}
		if next != "" {
			q["cursor"] = next
		}
		_, items, n := h.list("list-audit", &h.admin, q)
		for _, it := range items {
			all = append(all, it.(map[string]any))
		}
		if next = n; next == "" {
			break
		}
	}
	// The bootstrap, 3 creates, the update, the failed login, the
	// reader's creation, and the harness's tokens of the admin and the
	// reader.
	if len(all) != 9 {
		t.Errorf("%d entries in the log; want 9", len(all))
	}
	seen := map[any]bool{}
	for i, e := range all {
		if seen[e["id"]] {
			t.Errorf("entry %v twice", e["id"])
		}
		seen[e["id"]] = true
		if i > 0 && e["id"].(string) >= all[i-1]["id"].(string) {
			t.Errorf("not newest first at %d", i)
		}
	}
	// Filters: action, actor, target, time; the failed logins apart.
	for q, want := range map[string]int{
		"action=user.create":            4, // and the reader, by the store directly
		"action=user.update":            1,
		"target_type=user&target_id=2":  2,
		"action=login.failure":          1,
		"actor_id=1&action=user.update": 1,
		"since=2000-01-01T00:00:00Z":    len(all),
		"until=2000-01-01T00:00:00Z":    0,
	} {
		params := map[string]string{}
		for _, kv := range strings.Split(q, "&") {
			k, v, _ := strings.Cut(kv, "=")
			params[k] = v
		}
		resp, items, _ := h.list("list-audit", &h.admin, params)
		if resp.StatusCode != 200 || len(items) != want {
			t.Errorf("%s: %d items (%d %s); want %d", q, len(items), resp.StatusCode, resp.Body, want)
		}
	}
	for q, param := range map[string]string{"action=user.delete": "action", "actor_id=0": "actor_id", "since=yesterday": "since",
		"target_type=user": "target_type", "limit=101": "limit"} {
		k, v, _ := strings.Cut(q, "=")
		resp, _, _ := h.list("list-audit", &h.admin, map[string]string{k: v})
		expectProblem(t, resp, 422)
		if !strings.Contains(resp.Body, `"parameter":"`+param+`"`) {
			t.Errorf("%s: %s; want the parameter %s named", q, resp.Body, param)
		}
	}
}
