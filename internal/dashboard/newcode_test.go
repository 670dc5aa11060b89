package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// newCode: main of acme/payments is analysed at a commit (a branch
// analysis of two secrets); pull request #14 on it, at that base commit,
// keeps one of them, drops the other and adds one. Its page groups the
// findings "New in this PR", "Already on main" and "Fixed by this PR",
// each with its count and the finding, and says which analysis of main it
// was compared with; its base branch links to the branch's page, which
// lists that analysis, and the branch's repository's branches.
func newCode(t *testing.T, b *browser, admin string) {
	const base = "c0ffee0000000000000000000000000000000001"
	envelope := `"vc_type":"github","vc_id":1,"vc_name":"acme-github","repo_id":101,"repo_name":"acme/payments","webhook_id":1001`
	finding := func(name, fp string, line int) string {
		return fmt.Sprintf(`{"name":%q,"rule":"generic-api-key","path":"config/app.env","line":%d,"fingerprint":%q}`, name, line, fp)
	}
	kept, fixed, added := "sha256:"+strings.Repeat("1a", 32), "sha256:"+strings.Repeat("2b", 32), "sha256:"+strings.Repeat("3c", 32)
	code, body := call(t, "POST", b.api+"/pr/scan", admin, `{"scan_type":"SECRET","status":"completed","category":"gitleaks","branch":"refs/heads/main","commit_sha":"`+base+`",`+
		envelope+`,"findings":[`+finding(kept, "fp-kept", 3)+`,`+finding(fixed, "fp-fixed", 7)+`]}`)
	if code != 201 {
		t.Fatalf("the branch analysis: %d %s", code, body)
	}
	code, body = call(t, "POST", b.api+"/pr/scan", admin, `{"scan_type":"SECRET","status":"completed","category":"gitleaks","commit_sha":"`+strings.Repeat("d", 40)+`",`+
		`"base_ref":"main","base_sha":"`+base+`",`+envelope+`,"pr":{"pr_id":14,"pr_name":"Rotate the keys","pr_link":"https://git.example.com/acme/payments/pull/14"},`+
		`"findings":[`+finding(kept, "fp-kept", 5)+`,`+finding(added, "fp-added", 9)+`]}`)
	if code != 201 {
		t.Fatalf("the pull request's scan: %d %s", code, body)
	}
	b.open(t, fmt.Sprintf("#/pr/%d", prID(t, b.api, admin, 14)), "pr")
	headings := eval[[]string](t, b, `[...document.querySelectorAll('.changes h3')].map((h) => h.textContent)`)
	if strings.Join(headings, "|") != "New in this PR 1|Already on main 1|Fixed by this PR 1" {
		t.Errorf("the groups: %q", headings)
	}
	for group, want := range map[string]string{"new": added, "unchanged": kept, "absent": fixed} {
		rows := eval[[]string](t, b, fmt.Sprintf(`[...document.querySelectorAll('#group-%s tbody tr')].map((tr) => tr.textContent)`, group))
		if len(rows) != 1 || !strings.Contains(rows[0], want) {
			t.Errorf("the %s group's rows: %q; want %s", group, rows, want)
		}
	}
	if got := b.text(t, "#group-absent tbody tr"); !strings.Contains(got, "Fixed") || strings.Contains(got, "Allowlist this") {
		t.Errorf("the fixed finding's row: %q", got)
	}
	if got := b.text(t, ".gate table"); !strings.Contains(got, "Already on main") || !strings.Contains(got, "at c0ffee000000 (the base commit)") {
		t.Errorf("the gate's categories do not say the baseline: %q", got)
	}
	b.page(t, "new-code")

	b.act(t, "branch", chromedp.Click(chromedp.CSS(`.facts a[href^="#/branches/"]`)))
	if got := b.text(t, "h1"); got != "acme/payments · main" {
		t.Errorf("the branch page's h1 is %q", got)
	}
	if got := b.text(t, "main table tbody"); !strings.Contains(got, "gitleaks") || !strings.Contains(got, "c0ffee000000") {
		t.Errorf("the branch's analyses: %q", got)
	}
	if got := b.text(t, "main .findings"); !strings.Contains(got, kept) || !strings.Contains(got, fixed) {
		t.Errorf("the branch analysis's findings: %q", got)
	}
	b.page(t, "branch")
	b.act(t, "branches", chromedp.Click(chromedp.CSS(`.facts a[href^="#/branches?"]`)))
	if got := eval[[]string](t, b, `[...document.querySelectorAll('main tbody a')].map((a) => a.textContent)`); strings.Join(got, ",") != "main" {
		t.Errorf("the repository's branches: %q", got)
	}
	b.page(t, "branches")
}

// fixedPastFirstPage: pull request #15 fixes all 101 findings of release's
// analysis (high ones): under a filter of critical, the fixed group's first
// page has none, but only the first 100 were checked, which it says. (A
// step of its own, late: the PR it adds would change the counts of
// re-judged gates that the policy steps check.)
func fixedPastFirstPage(t *testing.T, b *browser, admin string) {
	envelope := `"vc_type":"github","vc_id":1,"vc_name":"acme-github","repo_id":101,"repo_name":"acme/payments","webhook_id":1001`
	finding := func(name, fp string, line int) string {
		return fmt.Sprintf(`{"name":%q,"rule":"generic-api-key","path":"config/app.env","line":%d,"fingerprint":%q}`, name, line, fp)
	}
	const release = "c0ffee0000000000000000000000000000000002"
	many := make([]string, 101)
	for i := range many {
		many[i] = finding(fmt.Sprintf("sha256:%064x", i), fmt.Sprintf("fp-release-%d", i), i+1)
	}
	code, body := call(t, "POST", b.api+"/pr/scan", admin, `{"scan_type":"SECRET","status":"completed","category":"gitleaks","branch":"refs/heads/release","commit_sha":"`+release+`",`+
		envelope+`,"findings":[`+strings.Join(many, ",")+`]}`)
	if code != 201 {
		t.Fatalf("release's analysis: %d %s", code, body)
	}
	code, body = call(t, "POST", b.api+"/pr/scan", admin, `{"scan_type":"SECRET","status":"completed","category":"gitleaks","commit_sha":"`+strings.Repeat("e", 40)+`",`+
		`"base_ref":"release","base_sha":"`+release+`",`+envelope+`,"pr":{"pr_id":15,"pr_name":"Drop the keys","pr_link":"https://git.example.com/acme/payments/pull/15"},"findings":[]}`)
	if code != 201 {
		t.Fatalf("pull request 15's scan: %d %s", code, body)
	}
	b.open(t, fmt.Sprintf("#/pr/%d?severity=critical", prID(t, b.api, admin, 15)), "pr")
	if got := b.text(t, "#group-absent"); !strings.Contains(got, "among the first 100 fixed findings (only those were checked)") {
		t.Errorf("the fixed group under a filter, past its first page: %q", got)
	}
}
