package dashboard_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// step is one step of an ordered browser run.
type step struct {
	name string
	run  func(t *testing.T)
}

// TestBrowser drives the dashboard in headless Chromium through a
// triage, in order, on one local stack: sign in (by keyboard), the
// blocked pull requests, a PR's gate (one request of its route) and
// findings with their severity, filtered by severity, allowlisting a
// finding (a reason is required) until the PR is not blocked, the gate
// policy (a required scan the PR lacks blocks it, a repository's policy
// lets it pass, the repository returned to the global policy), the
// allowlist's expiry (the stack's clock moved past it, the scheduled
// expiry run) until it is blocked again, the allowlists, the audit log
// and its new actions, a personal token of the scan scope created (shown
// once) and revoked, the webhooks and integrations (webhookSteps),
// hostile text from the API shown as text under a CSP that blocks inline
// script, no token or secret in a URL, localStorage or a log line, and
// signing out revoking the token. Each page is checked (one h1,
// labelled controls, axe-core) and kept as a screenshot in
// .build/screenshots.
func TestBrowser(t *testing.T) {
	b := startBrowser(t)
	admin := login(t, b.api) // the test's own client, beside the browser's
	pr10 := prID(t, b.api, admin, 10)
	var session, personal string
	var allowlistID string
	var secrets []string // the webhooks' secrets and the integration's token

	steps := []step{
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
			b.page(t, "sign-in")
			// A wrong password: an error, and no session.
			b.do(t, chromedp.SendKeys(chromedp.ID("username"), "admin"), chromedp.SendKeys(chromedp.ID("password"), "wrong-password-1"),
				chromedp.Click(chromedp.CSS("form button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("[role=alert]")))
			if got := b.text(t, "[role=alert]"); !strings.Contains(got, "not right") {
				t.Errorf("a wrong password shows %q", got)
			}
			b.page(t, "sign-in-failed")
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
			b.page(t, "blocked-pull-requests")
			// The repositories seen are offered by name.
			if got := eval[[]string](t, b, `[...document.querySelectorAll('#repo-names option')].map((o) => o.value)`); !slices.Contains(got, "acme/payments") {
				t.Errorf("the repository names offered: %v", got)
			}
			// The filters: another repository's PRs by its name (any case), all of them.
			b.act(t, "prs", chromedp.SetValue(chromedp.ID("blocked"), "any"), chromedp.SendKeys(chromedp.ID("repo"), "Platform/Infra"),
				chromedp.Click(chromedp.CSS("form.filters button")))
			if got := eval[string](t, b, `location.hash`); got != "#/prs?blocked=any&repo=Platform%2FInfra" {
				t.Errorf("the filtered list's address is %q", got)
			}
			names := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr a')].map((a) => a.textContent)`)
			if len(names) != 2 || !strings.HasPrefix(names[0], "platform/infra #") || !strings.HasPrefix(names[1], "platform/infra #") {
				t.Errorf("platform/infra's PRs: %v", names)
			}
			if got := b.text(t, "h1"); got != "Pull requests of Platform/Infra" {
				t.Errorf("the filtered list's h1 is %q", got)
			}
			b.page(t, "pull-requests-of-a-repository")
		}},
		{"pull request", func(t *testing.T) {
			b.open(t, "#/pr/999999", "pr")
			if got := b.text(t, "h1"); got != "Pull request not found" {
				t.Errorf("an unknown PR's page says %q", got)
			}
			b.open(t, "#/", "prs")
			before := b.requested()
			b.act(t, "pr", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('main tbody a')].filter((a) => a.textContent === 'acme/payments #10')`)))
			// The gate is one request of its route, not derived from scans.
			var gates, typed int
			for _, u := range b.requested()[len(before):] {
				if strings.HasSuffix(u, fmt.Sprintf("/api/pr/%d/gate", pr10)) {
					gates++
				}
				if strings.Contains(u, "scan_type=") {
					typed++
				}
			}
			if gates != 1 || typed != 0 {
				t.Errorf("the PR page asked for its gate %d times and for scans by type %d times; want 1 and 0", gates, typed)
			}
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
			if got := b.text(t, ".gate dl"); got != "Secrets that blockAny severityVulnerabilities that blockAny severityRequired scansNoneA missing required scanBlocks the pull request" {
				t.Errorf("the gate's policy: %q", got)
			}
			b.page(t, "pull-request")
		}},
		{"severity", func(t *testing.T) {
			// A scanner's findings of every severity, in a category of their
			// own, of the PR's head commit.
			const head = "9fceb02d0ae598e95dc970b74767f19372d61af8"
			var findings []string
			for i, sev := range []string{"low", "critical", "none", "high", "medium"} {
				findings = append(findings, fmt.Sprintf(`{"name":"CVE-2024-000%d","path":"go.sum","line":%d,"severity":%q}`, i+1, i+1, sev))
			}
			code, body := call(t, "POST", b.api+"/pr/scan", admin, `{"scan_type":"VULNERABILITY","status":"completed","category":"trivy","commit_sha":"`+head+`","vc_type":"github","vc_id":1,"vc_name":"acme-github",`+
				`"repo_id":101,"repo_name":"acme/payments","webhook_id":1001,"pr":{"pr_id":12,"pr_name":"Bump the dependencies","pr_link":"https://git.example.com/acme/payments/pull/12"},`+
				`"findings":[`+strings.Join(findings, ",")+`]}`)
			if code != 201 {
				t.Fatalf("record: %d %s", code, body)
			}
			pr12 := prID(t, b.api, admin, 12)
			b.open(t, fmt.Sprintf("#/pr/%d", pr12), "pr")
			if got := b.text(t, ".reasons"); !strings.HasPrefix(got, "VULNERABILITY (trivy): 5 unsuppressed findings in scan #") {
				t.Errorf("the gate's reasons: %q", got)
			}
			if got := b.text(t, ".gate .hint"); !strings.Contains(got, "; head commit "+head+".") {
				t.Errorf("the gate's head commit: %q", got)
			}
			severities := `[...document.querySelectorAll('main .findings tbody tr')].map((tr) => tr.cells[0].textContent + ' ' + tr.cells[1].textContent)`
			if got := eval[[]string](t, b, severities); !slices.Equal(got, []string{"CVE-2024-0001 low", "CVE-2024-0002 critical", "CVE-2024-0003 none", "CVE-2024-0004 high", "CVE-2024-0005 medium"}) {
				t.Errorf("the findings and their severities: %q", got)
			}
			if got := eval[[]string](t, b, `[...document.querySelectorAll('main .findings thead th')].map((th) => th.textContent)`); len(got) < 2 || got[1] != "Severity" {
				t.Errorf("the findings' columns: %q", got)
			}
			b.act(t, "pr", chromedp.SetValue(chromedp.ID("severity"), "high"), chromedp.Click(chromedp.CSS("form.filters button")))
			if got := eval[string](t, b, `location.hash`); got != fmt.Sprintf("#/pr/%d?severity=high", pr12) {
				t.Errorf("the filtered page's address is %q", got)
			}
			b.reload(t, "pr") // the address keeps the filter
			if got := eval[[]string](t, b, severities); !slices.Equal(got, []string{"CVE-2024-0002 critical", "CVE-2024-0004 high"}) {
				t.Errorf("the findings of high and above: %q", got)
			}
			if got := eval[string](t, b, `document.getElementById('severity').value`); got != "high" {
				t.Errorf("the filter shows %q; want high", got)
			}
			b.page(t, "severity-filter")
		}},
		{"new code", func(t *testing.T) {
			newCode(t, b, admin)
		}},
		{"allowlist a finding", func(t *testing.T) {
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "pr")
			button := chromedp.JSPath(`[...document.querySelectorAll('main tbody tr')].filter((tr) => tr.textContent.includes('CVE-2021-44228')).map((tr) => tr.querySelector('button'))`)
			b.do(t, chromedp.Click(button), chromedp.WaitVisible(chromedp.ID("al-reason")))
			if got := eval[string](t, b, `document.activeElement.id`); got != "al-heading" {
				t.Errorf("the focus is on %q after opening the form; want its heading", got)
			}
			b.page(t, "allowlist-this")
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
			b.page(t, "reason-required")
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
			b.page(t, "not-blocked")
		}},
		{"dismiss a finding", func(t *testing.T) {
			// PR 12's trivy findings: dismiss CVE-2024-0002 (critical), by its fingerprint.
			pr12 := prID(t, b.api, admin, 12)
			b.open(t, fmt.Sprintf("#/pr/%d", pr12), "pr")
			row := `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.cells[0].textContent === 'CVE-2024-0002')`
			b.do(t, chromedp.Click(chromedp.JSPath(`[...`+row+`.querySelectorAll('button')].find((x) => x.textContent.startsWith('Dismiss'))`)),
				chromedp.WaitVisible(chromedp.ID("dm-reason")))
			if got := eval[string](t, b, `document.activeElement.id`); got != "dm-heading" {
				t.Errorf("the focus is on %q after opening the form; want its heading", got)
			}
			b.page(t, "dismiss")
			// Without a reason and a comment: both errors, nothing sent.
			_, before := call(t, "GET", b.api+"/whitelist", admin, "")
			b.do(t, chromedp.Click(chromedp.CSS("form.dismiss-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("dm-comment-error")))
			if got := b.text(t, "#dm-reason-error") + " " + b.text(t, "#dm-comment-error"); got != "Choose a reason. Say why." {
				t.Errorf("the errors: %q", got)
			}
			if _, after := call(t, "GET", b.api+"/whitelist", admin, ""); after != before {
				t.Errorf("an allowlist was created without a reason: %s", after)
			}
			b.act(t, "pr", chromedp.SetValue(chromedp.ID("dm-reason"), "accepted_risk"),
				chromedp.SendKeys(chromedp.ID("dm-comment"), "the parser is only given our own files"),
				chromedp.Click(chromedp.CSS("form.dismiss-form button[type=submit]")))
			msg := b.text(t, "[role=status]")
			if !strings.Contains(msg, "Dismissed with allowlist #") || !strings.Contains(msg, "0 secret findings and 1 vulnerability finding") {
				t.Errorf("the dismissal's message: %q", msg)
			}
			id := eval[string](t, b, `document.querySelector('[role=status] a').getAttribute('href').split('/').pop()`)
			_, body := call(t, "GET", b.api+"/whitelist/"+id, admin, "")
			for _, want := range []string{`"name":"CVE-2024-0002"`, `"reason":"accepted_risk"`, `"repos":[101]`, `"global_":false`, `"fingerprints":["`,
				`"comment":"the parser is only given our own files"`} {
				if !strings.Contains(body, want) {
					t.Errorf("the allowlist lacks %s: %s", want, body)
				}
			}
			if got := eval[string](t, b, row+`.cells[5].textContent`); got != "Suppressed by allowlist #"+id {
				t.Errorf("the dismissed finding's state: %q", got)
			}
			b.page(t, "dismissed")
		}},
		{"gate policy", func(t *testing.T) {
			// Admins reach the policy from the navigation.
			b.act(t, "policy", chromedp.Click(chromedp.CSS(`#nav a[href="#/gate/policy"]`)))
			if got := b.text(t, "h1"); got != "Gate policy" {
				t.Errorf("the policy page's h1 is %q", got)
			}
			b.page(t, "gate-policy")
			// A category that is not one: the form says so, and sends nothing.
			b.do(t, chromedp.Click(chromedp.CSS("#gp-required button")), chromedp.SendKeys(chromedp.ID("gp-req-cat-0"), "git leaks"),
				chromedp.Click(chromedp.CSS("form.policy-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("gp-req-cat-0-error")))
			if got := eval[string](t, b, `document.activeElement.id + ' ' + document.getElementById('gp-req-cat-0').getAttribute('aria-invalid')`); got != "gp-req-cat-0 true" {
				t.Errorf("after the error, focus and aria-invalid: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/gate/policy", admin, ""); !strings.Contains(body, `"version":0`) {
				t.Errorf("an invalid policy was sent: %s", body)
			}
			// Require a secret scan of category gitleaks: PR 10 has none.
			b.act(t, "policy", chromedp.SetValue(chromedp.ID("gp-req-cat-0"), "gitleaks"),
				chromedp.Click(chromedp.CSS("form.policy-form button[type=submit]")))
			if got := b.text(t, "[role=status]"); got != "Saved the global policy (version 1). The gates of 8 pull requests were judged again." {
				t.Errorf("the change's message: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/gate/policy", admin, ""); !strings.Contains(body, `"required":[{"scan_type":"SECRET","category":"gitleaks"}],"block_on_missing":true`) {
				t.Errorf("the policy stored: %s", body)
			}
			b.page(t, "gate-policy-saved")
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "pr")
			if got := b.text(t, "[data-gate]"); got != "Blocked" {
				t.Errorf("without the required scan, the gate says %q; want Blocked", got)
			}
			if got := b.text(t, ".reasons"); got != "SECRET (gitleaks): no scan, and the policy requires one" {
				t.Errorf("the gate's reasons: %q", got)
			}
			if got := b.text(t, ".gate dl"); !strings.Contains(got, "Required scansSECRET (gitleaks)") {
				t.Errorf("the gate's policy: %q", got)
			}
			b.page(t, "blocked-by-a-missing-scan")
			// Repository 101 lets a missing scan pass: PR 10 is not blocked.
			b.act(t, "repo-policy", chromedp.Click(chromedp.CSS(`.gate a[href="#/gate/policy/repos/101"]`)))
			if got := b.text(t, "h1"); got != "Gate policy of repository 101" {
				t.Errorf("the repository's policy page's h1 is %q", got)
			}
			b.page(t, "repository-policy")
			b.act(t, "repo-policy", chromedp.SetValue(chromedp.ID("gp-missing"), "false"), chromedp.Click(chromedp.CSS("form.policy-form button[type=submit]")))
			if got := b.text(t, "[role=status]"); got != "Saved the policy of repository 101 (version 2). The gates of 8 pull requests were judged again." {
				t.Errorf("the change's message: %q", got)
			}
			if got := b.text(t, ".lead"); !strings.HasPrefix(got, "Its own policy: a missing required scan does not block; the rest as the global policy.") {
				t.Errorf("the repository's policy: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/gate/policy/repos/101", admin, ""); !strings.Contains(body, `"override":{"block_on_missing":false}`) {
				t.Errorf("the repository's policy stored: %s", body)
			}
			b.page(t, "repository-policy-saved")
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "pr")
			if got := b.text(t, "[data-gate]"); got != "Not blocked" {
				t.Errorf("with the repository's policy, the gate says %q; want Not blocked", got)
			}
			// The listing reads the same stored decision.
			b.open(t, "#/prs?blocked=false", "prs")
			if !eval[bool](t, b, fmt.Sprintf(`[...document.querySelectorAll('main tbody a')].some((a) => a.getAttribute('href') === '#/pr/%d')`, pr10)) {
				t.Errorf("PR 10 is not among the pull requests not blocked: %s", b.text(t, "main table"))
			}
			// Back to the global policy: blocked again; then the required
			// scan removed: not blocked.
			b.open(t, "#/gate/policy/repos/101", "repo-policy")
			b.act(t, "repo-policy", chromedp.Click(chromedp.CSS("section.lifecycle button")))
			if got := b.text(t, "[role=status]"); got != "Repository 101 follows the global policy again (version 3). The gates of 8 pull requests were judged again." {
				t.Errorf("the return's message: %q", got)
			}
			if got := b.text(t, ".lead"); !strings.HasPrefix(got, "It follows the global policy.") {
				t.Errorf("the repository's policy: %q", got)
			}
			if _, body := call(t, "GET", fmt.Sprintf("%s/pr/%d/gate", b.api, pr10), admin, ""); !strings.Contains(body, `"blocked":true`) || !strings.Contains(body, `"kind":"missing"`) {
				t.Errorf("PR 10's gate under the global policy again: %s", body)
			}
			b.open(t, "#/gate/policy", "policy")
			b.act(t, "policy", chromedp.Click(chromedp.CSS("li.pair button")), chromedp.Click(chromedp.CSS("form.policy-form button[type=submit]")))
			if _, body := call(t, "GET", fmt.Sprintf("%s/pr/%d/gate", b.api, pr10), admin, ""); !strings.Contains(body, `"blocked":false`) {
				t.Errorf("PR 10's gate under the default policy: %s", body)
			}
		}},
		{"expire", func(t *testing.T) {
			b.clock.advance(2 * time.Hour)
			if err := b.stack.RunScheduled(context.Background(), "ExpireAllowlistsFunction", b.clock.Now()); err != nil {
				t.Fatal(err)
			}
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "pr")
			if got := b.text(t, "[data-gate]"); got != "Blocked" {
				t.Errorf("after the expiry, the gate says %q; want Blocked", got)
			}
			b.page(t, "blocked-again")
			b.open(t, "#/whitelist/"+allowlistID, "allowlist")
			if got := b.text(t, ".lead strong"); got != "Expired" {
				t.Errorf("the expired allowlist's state: %q", got)
			}
			b.page(t, "allowlist-expired")
		}},
		{"deactivate and edit", func(t *testing.T) {
			code, body := call(t, "POST", b.api+"/whitelist", admin, `{"type":"SECRET","name":"sha256:5f2b9c0e8d1a","global_":true,"reason":"used_in_tests","comment":"a fixture"}`)
			if code != 201 {
				t.Fatalf("create: %d %s", code, body)
			}
			id := strings.TrimPrefix(strings.SplitN(body, ",", 2)[0], `{"id":`)
			b.open(t, "#/whitelist/"+id, "allowlist")
			b.page(t, "allowlist")
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
			if n := eval[int](t, b, `document.querySelectorAll('main tbody tr').length`); n != 3 {
				t.Errorf("%d allowlists listed; want 3 (the finding allowlisted, the dismissal, this one)", n)
			}
			b.page(t, "allowlists")
		}},
		{"audit log", func(t *testing.T) {
			b.open(t, "#/audit", "audit")
			b.page(t, "audit-log")
			b.act(t, "audit", chromedp.SetValue(chromedp.ID("action"), "allowlist.expire"), chromedp.Click(chromedp.CSS("form.filters button")))
			rows := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.textContent)`)
			if len(rows) != 1 || !strings.Contains(rows[0], "allowlist.expire") || !strings.Contains(rows[0], "system") {
				t.Errorf("the expiry's entries: %v", rows)
			}
			// The policy's changes, by their target.
			b.act(t, "audit", chromedp.SetValue(chromedp.ID("action"), "gate.policy.update"), chromedp.SetValue(chromedp.ID("target_type"), "gate_policy"),
				chromedp.SendKeys(chromedp.ID("target_id"), "101"), chromedp.Click(chromedp.CSS("form.filters button")))
			targets := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.cells[1].textContent + ' ' + tr.cells[3].textContent + ' ' + tr.cells[3].querySelector('a').getAttribute('href'))`)
			if want := "gate.policy.update gate_policy 101 #/gate/policy/repos/101"; len(targets) != 2 || targets[0] != want || targets[1] != want {
				t.Errorf("repository 101's policy changes: %q", targets)
			}
			b.page(t, "audit-log-policy-changes")
			b.open(t, "#/audit?action=scan.record", "audit")
			if got := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.cells[2].textContent)`); len(got) != 15 || slices.ContainsFunc(got[:3], func(a string) bool { return !strings.HasPrefix(a, "admin (user 1, token ") }) || slices.ContainsFunc(got[3:], func(a string) bool { return a != "system" }) {
				t.Errorf("the scans recorded (12 of the demo data, three by the test: PR 12's, main's and PR 14's): actors %q", got)
			}
		}},
		{"health", func(t *testing.T) {
			// The local stack's metrics of what the steps before did: the
			// dashboard's own requests, the gates the demo data and the
			// steps decided.
			b.open(t, "#/health", "health")
			ok := eval[string](t, b, `[...document.querySelectorAll('main table')][0].rows[1].cells[1].textContent`)
			if n, err := strconv.Atoi(ok); err != nil || n == 0 {
				t.Errorf("2xx requests shown: %q", ok)
			}
			if routes := eval[int](t, b, `[...document.querySelectorAll('main table')][1].tBodies[0].rows.length`); routes < 5 {
				t.Errorf("%d routes shown", routes)
			}
			if text := b.text(t, "main"); !strings.Contains(text, "Gate decisions by cause") || !strings.Contains(text, "Delivery attempts by outcome") {
				t.Errorf("the health page: %s", text)
			}
			b.page(t, "health")
		}},
		{"token created and revoked", func(t *testing.T) {
			b.open(t, "#/tokens", "tokens")
			b.do(t, chromedp.SendKeys(chromedp.ID("tk-name"), "ci-payments"), chromedp.SetValue(chromedp.ID("tk-days"), "30"), chromedp.SetValue(chromedp.ID("tk-scope"), "scan"),
				chromedp.Click(chromedp.CSS("form.create button[type=submit]")), chromedp.WaitVisible(chromedp.ID("tk-secret")),
				void(chromedp.Poll[bool](`[...document.querySelectorAll('main tbody tr')].some((tr) => tr.textContent.includes('ci-payments'))`, chromedp.WithPollingTimeout(0))))
			personal = eval[string](t, b, `document.getElementById('tk-secret').value`)
			if code, body := call(t, "GET", b.api+"/users/me", personal, ""); !strings.HasPrefix(personal, "sgt_") || code != 200 {
				t.Fatalf("the token shown (%q) does not work: %d %s", personal, code, body)
			}
			// A scan token: it may record scans (an empty body reaches the
			// validation: 422) and nothing else (403).
			if code, body := call(t, "POST", b.api+"/pr/scan", personal, `{}`); code != 422 {
				t.Errorf("the scan token records a scan: %d %s; want 422", code, body)
			}
			if code, _ := call(t, "DELETE", b.api+"/auth/tokens/1", personal, ""); code != 403 {
				t.Errorf("a scan token revoked a token: %d", code)
			}
			if got := eval[string](t, b, `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.textContent.includes('ci-payments')).cells[2].textContent`); got != "scan" {
				t.Errorf("the token's scope is listed as %q", got)
			}
			b.page(t, "token-created")
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
			b.page(t, "token-revoked")
		}},
		{"a token scoped to repositories", func(t *testing.T) {
			b.open(t, "#/tokens", "tokens")
			b.do(t, chromedp.SendKeys(chromedp.ID("tk-name"), "ci-scoped"), chromedp.SetValue(chromedp.ID("tk-scope"), "scan"),
				chromedp.SendKeys(chromedp.ID("tk-repos"), "2/201 x"), chromedp.Click(chromedp.CSS("form.create button[type=submit]")),
				chromedp.WaitVisible(chromedp.CSS("#tk-repos[aria-invalid=true]")))
			b.do(t, chromedp.SetValue(chromedp.ID("tk-repos"), "2/201, 3/7"), chromedp.Click(chromedp.CSS("form.create button[type=submit]")),
				chromedp.WaitVisible(chromedp.ID("tk-secret")),
				void(chromedp.Poll[bool](`[...document.querySelectorAll('main tbody tr')].some((tr) => tr.textContent.includes('ci-scoped'))`, chromedp.WithPollingTimeout(0))))
			scoped := eval[string](t, b, `document.getElementById('tk-secret').value`)
			if got := eval[string](t, b, `[...document.querySelectorAll('main tbody tr')].find((tr) => tr.textContent.includes('ci-scoped')).cells[6].textContent`); got != "2/201, 3/7" {
				t.Errorf("the token's repositories are listed as %q", got)
			}
			// It reads its repository's PRs only, and nothing else.
			code, body := call(t, "GET", b.api+"/pr", scoped, "")
			if code != 200 || !strings.Contains(body, `"repo_id":201`) || strings.Contains(body, `"repo_id":101`) {
				t.Errorf("the scoped token lists PRs: %d %s", code, body)
			}
			if code, _ := call(t, "GET", b.api+"/users/me", scoped, ""); code != 403 {
				t.Errorf("the scoped token reads its user: %d; want 403", code)
			}
		}},
		{"a change answered 202 says its re-evaluation runs", func(t *testing.T) {
			// The text the allowlist pages show for an answer, from the
			// module they use: a large change's 202 names its re-evaluation
			// rather than counts of 0.
			got := eval[string](t, b, `import('/rules.js').then((m) => [
				m.changedText({secrets_updated: 0, vulnerabilities_updated: 0, reevaluation: {id: 7, status: 'running', findings: 12000}}),
				m.changedText({secrets_updated: 0, vulnerabilities_updated: 0, reevaluation: {id: 8, status: 'running', findings: null}}),
				m.changedText({secrets_updated: 1, vulnerabilities_updated: 2})].join(' | '))`)
			want := "Re-evaluation #7 of 12000 findings runs in the background: counts and gates change as it goes, with nothing to send again. | " +
				"Re-evaluation #8 of its findings runs in the background: counts and gates change as it goes, with nothing to send again. | " +
				"It changed how 1 secret finding and 2 vulnerability findings are judged."
			if got != want {
				t.Errorf("the change texts: %q; want %q", got, want)
			}
		}},
		{"a fixed group filtered past its first page", func(t *testing.T) {
			fixedPastFirstPage(t, b, admin)
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
			b.page(t, "hostile-text")
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
			b.page(t, "signed-out")
			// A page that needs a session asks for one.
			b.open(t, fmt.Sprintf("#/pr/%d", pr10), "signin")
		}},
		{"no token in a URL, localStorage or a log line", func(t *testing.T) {
			if session == "" || personal == "" || len(secrets) != 3 {
				t.Fatalf("the tokens and secrets were not captured: %d secrets", len(secrets))
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
			for _, secret := range append([]string{session, personal, adminPassword}, secrets...) {
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
	// The webhook and integration pages come before the hostile text.
	at := slices.IndexFunc(steps, func(s step) bool { return s.name == "hostile text and the CSP" })
	steps = slices.Insert(steps, at, webhookSteps(t, b, admin, &secrets)...)
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.FailNow() // the steps build on each other
		}
	}
}
