package dashboard_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowser drives the dashboard in headless Chromium through a
// triage, in order, on one local stack: sign in (by keyboard), the
// blocked pull requests, a PR's gate and findings, allowlisting a finding
// (a reason is required) until the PR is not blocked, the allowlist's
// expiry (the stack's clock moved past it, the scheduled expiry run)
// until it is blocked again, the allowlists, the audit log, a personal
// token created (shown once) and revoked, hostile text from the API shown
// as text under a CSP that blocks inline script, no token in a URL,
// localStorage or a log line, and signing out revoking the token. Each
// page is checked (one h1, labelled controls, axe-core) and kept as a
// screenshot in .build/screenshots.
func TestBrowser(t *testing.T) {
	b := startBrowser(t)
	admin := login(t, b.api) // the test's own client, beside the browser's
	pr10 := prID(t, b.api, admin, 10)
	var session, personal string
	var allowlistID string

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"first load", func(t *testing.T) {
			b.do(t, chromedp.Navigate(b.url+"/"))
			b.shown(t, 0, "signin")
			if got := eval[string](t, b, `location.hash`); got != "#/signin" {
				t.Errorf("the dashboard without a session shows %q; want #/signin", got)
			}
			b.mu.Lock()
			fetched := map[string]bool{}
			for _, r := range b.requests {
				if u, err := url.Parse(r); err == nil && u.Host == strings.TrimPrefix(b.url, "http://") {
					fetched[u.Path] = true
				}
			}
			b.mu.Unlock()
			var want, got []string
			for _, name := range firstLoad(t) {
				want = append(want, "/"+strings.TrimSuffix(name, "index.html"))
			}
			for p := range fetched {
				got = append(got, p)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the first load fetched %v; TestFirstLoadBudget measures %v", got, want)
			}
		}},
		{"sign in", func(t *testing.T) {
			for _, l := range [][2]string{{"username", "Username"}, {"password", "Password"}} {
				if got := b.text(t, "label[for="+l[0]+"]"); got != l[1] {
					t.Errorf("the %s field is labelled %q; want %q", l[0], got, l[1])
				}
			}
			if got := b.text(t, "form button[type=submit]"); got != "Sign in" {
				t.Errorf("the button says %q; want Sign in", got)
			}
			b.page(t, "01-sign-in")
			// A wrong password: an error, and no session.
			b.do(t, chromedp.SendKeys(chromedp.ID("username"), "admin"), chromedp.SendKeys(chromedp.ID("password"), "wrong-password-1"),
				chromedp.Click(chromedp.CSS("form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("[role=alert]")))
			if got := b.text(t, "[role=alert]"); !strings.Contains(got, "not right") {
				t.Errorf("a wrong password shows %q", got)
			}
			b.page(t, "02-sign-in-failed")
			// By keyboard: the password, Enter.
			b.act(t, "prs", chromedp.Clear(chromedp.ID("password")), chromedp.Focus(chromedp.ID("username")), chromedp.KeyEvent(kb.Tab),
				chromedp.KeyEvent(adminPassword), chromedp.KeyEvent(kb.Enter))
			session = eval[string](t, b, `sessionStorage.getItem('scangate.token') || ''`)
			if !strings.HasPrefix(session, "sgt_") {
				t.Fatalf("the session's token in sessionStorage is %q", session)
			}
		}},
		{"blocked pull requests", func(t *testing.T) {
			if got := b.text(t, "h1"); got != "Blocked pull requests" {
				t.Errorf("the home page is %q", got)
			}
			rows := eval[[][2]string](t, b, `[...document.querySelectorAll('main table tbody tr')].map((tr) => { const a = tr.querySelector('a'); return [a.getAttribute('href'), a.textContent]; })`)
			_, body := call(t, "GET", b.api+"/pr?blocked=true&limit=100", admin, "")
			if len(rows) == 0 || strings.Count(body, `"pr_name"`) != len(rows) {
				t.Errorf("%d rows; the API has %d blocked PRs", len(rows), strings.Count(body, `"pr_name"`))
			}
			found := false
			for _, r := range rows {
				if !hrefPR.MatchString(r[0]) || !strings.Contains(body, `{"id":`+strings.TrimPrefix(r[0], "#/pr/")+`,`) {
					t.Errorf("row %v does not link to a blocked PR's page", r)
				}
				found = found || r[1] == "acme/payments #10" && r[0] == fmt.Sprintf("#/pr/%d", pr10)
			}
			if !found {
				t.Errorf("no row names acme/payments #10 and links to #/pr/%d: %v", pr10, rows)
			}
			b.page(t, "03-blocked-pull-requests")
			// The filters: another repository's PRs, all of them.
			b.act(t, "prs", chromedp.SetValue(chromedp.ID("blocked"), "any"), chromedp.SendKeys(chromedp.ID("vc_id"), "2"),
				chromedp.SendKeys(chromedp.ID("repo_id"), "201"), chromedp.Click(chromedp.CSS("form.filters button")))
			if got := eval[string](t, b, `location.hash`); got != "#/prs?blocked=any&vc_id=2&repo_id=201" {
				t.Errorf("the filtered list's address is %q", got)
			}
			names := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr a')].map((a) => a.textContent)`)
			if len(names) != 2 || !strings.HasPrefix(names[0], "platform/infra #") {
				t.Errorf("repository 201's PRs: %v", names)
			}
		}},
		{"pull request", func(t *testing.T) {
			b.open(t, "#/pr/999999", "pr")
			if got := b.text(t, "h1"); got != "Pull request not found" {
				t.Errorf("an unknown PR's page says %q", got)
			}
			b.open(t, "#/", "prs")
			b.act(t, "pr", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('main tbody a')].filter((a) => a.textContent === 'acme/payments #10')`)))
			if got := eval[string](t, b, `location.hash`); got != fmt.Sprintf("#/pr/%d", pr10) {
				t.Errorf("the PR page's address is %q", got)
			}
			if got := b.text(t, "[data-gate]"); got != "Blocked" {
				t.Errorf("the gate says %q; want Blocked", got)
			}
			if got := b.text(t, ".reasons"); !strings.Contains(got, "VULNERABILITY (default): 1 unsuppressed finding in scan #") {
				t.Errorf("the gate's reasons: %q", got)
			}
			if got := b.text(t, "h1"); got != "acme/payments #10" {
				t.Errorf("the PR page's h1 is %q", got)
			}
			b.page(t, "04-pull-request")
		}},
		{"allowlist a finding", func(t *testing.T) {
			button := chromedp.JSPath(`[...document.querySelectorAll('main tbody tr')].filter((tr) => tr.textContent.includes('CVE-2021-44228')).map((tr) => tr.querySelector('button'))`)
			b.do(t, chromedp.Click(button), chromedp.WaitVisible(chromedp.ID("al-reason")))
			if got := eval[string](t, b, `document.activeElement.id`); got != "al-heading" {
				t.Errorf("the focus is on %q after opening the form; want its heading", got)
			}
			b.page(t, "05-allowlist-this")
			// Without a reason: the error, and nothing sent.
			b.do(t, chromedp.Click(chromedp.CSS("form.allowlist-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("al-reason-error")))
			if got := b.text(t, "#al-reason-error"); got != "Choose a reason." {
				t.Errorf("the reason's error is %q", got)
			}
			if got := eval[string](t, b, `document.activeElement.id + ' ' + document.getElementById('al-reason').getAttribute('aria-invalid')`); got != "al-reason true" {
				t.Errorf("after the error, focus and aria-invalid: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/whitelist", admin, ""); body != `{"items":[],"next_cursor":null}` {
				t.Errorf("an allowlist was created without a reason: %s", body)
			}
			b.page(t, "06-reason-required")
			// With a reason, for this repository, expiring in an hour.
			expires := eval[string](t, b, `(() => { const d = new Date(Date.now() + 3600e3); const p = (n) => String(n).padStart(2, '0');
				return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()); })()`)
			b.act(t, "pr", chromedp.SetValue(chromedp.ID("al-reason"), "false_positive"), chromedp.SetValue(chromedp.ID("al-expires"), expires),
				chromedp.SendKeys(chromedp.ID("al-comment"), "log4j is not on this service's classpath"),
				chromedp.Click(chromedp.CSS("form.allowlist-form button[type=submit]")))
			if got := b.text(t, "[data-gate]"); got != "Not blocked" {
				t.Errorf("after allowlisting, the gate says %q; want Not blocked", got)
			}
			msg := b.text(t, "[role=status]")
			if !strings.Contains(msg, "Created allowlist #") || !strings.Contains(msg, "0 secret findings and 1 vulnerability finding") {
				t.Errorf("the creation's message: %q", msg)
			}
			allowlistID = eval[string](t, b, `document.querySelector('[role=status] a').getAttribute('href').split('/').pop()`)
			_, body := call(t, "GET", b.api+"/whitelist/"+allowlistID, admin, "")
			for _, want := range []string{`"reason":"false_positive"`, `"repos":[101]`, `"global_":false`, `"expired":false`} {
				if !strings.Contains(body, want) {
					t.Errorf("the allowlist lacks %s: %s", want, body)
				}
			}
			b.page(t, "07-not-blocked")
		}},
		{"expire", func(t *testing.T) {
			b.clock.advance(2 * time.Hour)
			if err := b.stack.RunScheduled(context.Background(), "ExpireAllowlistsFunction", b.clock.Now()); err != nil {
				t.Fatal(err)
			}
			b.reload(t, "pr")
			if got := b.text(t, "[data-gate]"); got != "Blocked" {
				t.Errorf("after the expiry, the gate says %q; want Blocked", got)
			}
			b.page(t, "08-blocked-again")
			b.open(t, "#/whitelist/"+allowlistID, "allowlist")
			if got := b.text(t, ".lead strong"); got != "Expired" {
				t.Errorf("the expired allowlist's state: %q", got)
			}
			b.page(t, "09-allowlist-expired")
		}},
		{"deactivate and edit", func(t *testing.T) {
			code, body := call(t, "POST", b.api+"/whitelist", admin, `{"type":"SECRET","name":"sha256:5f2b9c0e8d1a","global_":true,"reason":"used_in_tests","comment":"a fixture"}`)
			if code != 201 {
				t.Fatalf("create: %d %s", code, body)
			}
			id := strings.TrimPrefix(strings.SplitN(body, ",", 2)[0], `{"id":`)
			b.open(t, "#/whitelist/"+id, "allowlist")
			b.page(t, "10-allowlist")
			b.act(t, "allowlist", chromedp.Click(chromedp.CSS("button.danger")))
			if got := b.text(t, ".lead strong"); got != "Inactive" {
				t.Errorf("after deactivating: %q", got)
			}
			if got := b.text(t, "[role=status]"); !strings.HasPrefix(got, "Deactivated. It changed how 2 secret findings") {
				t.Errorf("the deactivation's message: %q", got)
			}
			b.act(t, "allowlist", chromedp.SendKeys(chromedp.ID("ed-comment"), "reviewed again"), chromedp.SendKeys(chromedp.ID("ed-paths"), "test/**"),
				chromedp.Click(chromedp.CSS("form.edit button[type=submit]")))
			if got := b.text(t, "ol.comments"); !strings.Contains(got, "a fixture") || !strings.Contains(got, "reviewed again") {
				t.Errorf("the comments: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/whitelist/"+id, admin, ""); !strings.Contains(body, `"paths":["test/**"]`) || !strings.Contains(body, `"active":false`) {
				t.Errorf("after the edit: %s", body)
			}
			b.open(t, "#/whitelist", "allowlists")
			if n := eval[int](t, b, `document.querySelectorAll('main tbody tr').length`); n != 2 {
				t.Errorf("%d allowlists listed; want 2", n)
			}
			b.page(t, "11-allowlists")
		}},
		{"audit log", func(t *testing.T) {
			b.open(t, "#/audit", "audit")
			b.page(t, "12-audit-log")
			b.act(t, "audit", chromedp.SetValue(chromedp.ID("action"), "allowlist.expire"), chromedp.Click(chromedp.CSS("form.filters button")))
			rows := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.textContent)`)
			if len(rows) != 1 || !strings.Contains(rows[0], "allowlist.expire") || !strings.Contains(rows[0], "system") {
				t.Errorf("the expiry's entries: %v", rows)
			}
		}},
		{"token created and revoked", func(t *testing.T) {
			b.open(t, "#/tokens", "tokens")
			b.do(t, chromedp.SendKeys(chromedp.ID("tk-name"), "ci-payments"), chromedp.SetValue(chromedp.ID("tk-days"), "30"),
				chromedp.Click(chromedp.CSS("form.create button[type=submit]")), chromedp.WaitVisible(chromedp.ID("tk-secret")),
				void(chromedp.Poll[bool](`[...document.querySelectorAll('main tbody tr')].some((tr) => tr.textContent.includes('ci-payments'))`, chromedp.WithPollingTimeout(0))))
			personal = eval[string](t, b, `document.getElementById('tk-secret').value`)
			if code, body := call(t, "GET", b.api+"/users/me", personal, ""); !strings.HasPrefix(personal, "sgt_") || code != 200 {
				t.Fatalf("the token shown (%q) does not work: %d %s", personal, code, body)
			}
			if code, _ := call(t, "DELETE", b.api+"/auth/tokens/1", personal, ""); code != 403 {
				t.Errorf("a read token revoked a token: %d", code)
			}
			b.page(t, "13-token-created")
			b.act(t, "tokens", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('main tbody tr')].filter((tr) => tr.textContent.includes('ci-payments')).map((tr) => tr.querySelector('button'))`)))
			if got := b.text(t, "[role=status]"); got != "Revoked the token ci-payments." {
				t.Errorf("the revocation's message: %q", got)
			}
			if eval[bool](t, b, fmt.Sprintf(`document.body.innerHTML.includes(%q)`, personal)) {
				t.Error("the token is still shown after it was revoked")
			}
			if code, _ := call(t, "GET", b.api+"/users/me", personal, ""); code != 401 {
				t.Errorf("the revoked token answers %d; want 401", code)
			}
			b.page(t, "14-token-revoked")
		}},
		{"hostile text and the CSP", func(t *testing.T) {
			name := `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
			path := `<img src=x onerror=window.__xss=3>/a.js`
			scan := fmt.Sprintf(`{"scan_type":"SECRET","status":"completed","vc_type":"github","vc_id":1,"vc_name":"acme-github","repo_id":101,"repo_name":"acme/payments","webhook_id":1001,`+
				`"pr":{"pr_id":99,"pr_name":"<img src=x onerror=window.__xss=4> tricky","pr_link":"javascript:window.__xss=5"},"findings":[{"name":%q,"path":%q,"line":3}]}`, name, path)
			code, body := call(t, "POST", b.api+"/pr/scan", admin, scan)
			if code != 201 {
				t.Fatalf("record: %d %s", code, body)
			}
			b.open(t, fmt.Sprintf("#/pr/%d", prID(t, b.api, admin, 99)), "pr")
			cells := eval[[]string](t, b, `[...document.querySelector('main .findings tbody tr').cells].map((c) => c.textContent)`)
			if !slices.Contains(cells, name) || !slices.Contains(cells, path) {
				t.Errorf("the finding's cells are %q; want its name and path as text", cells)
			}
			if got := b.text(t, ".lead"); !strings.HasPrefix(got, "<img src=x onerror=window.__xss=4> tricky") {
				t.Errorf("the PR's name shows as %q", got)
			}
			if got := eval[string](t, b, `String(window.__xss) + ' ' + document.querySelectorAll('main img, main script').length + ' ' + document.querySelectorAll('a[href^="javascript"]').length + ' ' + window.__violations.length`); got != "undefined 0 0 0" {
				t.Errorf("hostile text ran or became markup (window.__xss, img/script elements, javascript: links, CSP violations): %s", got)
			}
			b.page(t, "15-hostile-text")
			// The CSP itself: an inline script and an inline handler put
			// into the page are refused, and the browser says so.
			eval[bool](t, b, `(() => { const s = document.createElement('script'); s.textContent = 'window.__csp = 1'; document.body.append(s);
				const d = document.createElement('div'); d.id = 'injected'; d.innerHTML = '<img src="/none.png" onerror="window.__csp = 2">'; document.body.append(d); return true; })()`)
			if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`window.__violations.length >= 2`, chromedp.WithPollingTimeout(0))); err != nil {
				t.Fatal(err)
			}
			got := eval[[]string](t, b, `window.__violations`)
			if ran := eval[string](t, b, `String(window.__csp)`); ran != "undefined" || !strings.HasPrefix(got[0], "script-src-elem inline") || !strings.HasPrefix(got[1], "script-src-attr inline") {
				t.Errorf("the injected inline script and handler: window.__csp %s, violations %q", ran, got)
			}
			eval[bool](t, b, `document.getElementById('injected').remove() || true`)
		}},
		{"sign out", func(t *testing.T) {
			b.open(t, "#/tokens", "tokens")
			b.act(t, "signin", chromedp.Click(chromedp.CSS("#nav button")))
			if got := b.text(t, "[role=status]"); got != "You are signed out." {
				t.Errorf("after signing out: %q", got)
			}
			if n := eval[int](t, b, `sessionStorage.length`); n != 0 {
				t.Errorf("sessionStorage keeps %d items after signing out", n)
			}
			if code, _ := call(t, "GET", b.api+"/users/me", session, ""); code != 401 {
				t.Errorf("the signed-out session's token answers %d; want 401", code)
			}
			if eval[bool](t, b, `!document.getElementById('nav').hidden`) {
				t.Error("the navigation is shown after signing out")
			}
			b.page(t, "16-signed-out")
			// A page that needs a session asks for one.
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "signin")
		}},
		{"no token in a URL, localStorage or a log line", func(t *testing.T) {
			if session == "" || personal == "" {
				t.Fatal("the tokens were not captured")
			}
			if n := eval[int](t, b, `localStorage.length`); n != 0 {
				t.Errorf("localStorage holds %d items", n)
			}
			if c := eval[string](t, b, `document.cookie`); c != "" {
				t.Errorf("cookies: %q", c)
			}
			b.mu.Lock()
			requests, exceptions := slices.Clone(b.requests), slices.Clone(b.exceptions)
			b.mu.Unlock()
			read, err := os.ReadFile(b.logs)
			if err != nil {
				t.Fatal(err)
			}
			logs := string(read)
			for _, secret := range []string{session, personal, adminPassword} {
				for _, u := range requests {
					if strings.Contains(u, secret) || strings.Contains(u, url.QueryEscape(secret)) {
						t.Errorf("a URL carries a secret: %s", u)
					}
				}
				if strings.Contains(logs, secret) {
					t.Errorf("the server's log carries a secret")
				}
			}
			if len(requests) < 30 || !strings.Contains(logs, `"operation":"CreateAllowlist"`) {
				t.Errorf("too little was recorded to judge: %d URLs, %d bytes of log", len(requests), len(logs))
			}
			if len(exceptions) > 0 {
				t.Errorf("the pages threw: %v", exceptions)
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.FailNow() // the steps build on each other
		}
	}
}
