package commitstatus_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/events/commitstatus"
)

// gate decodes a gate resource as GET /pr/{pr_id}/gate shows it.
func gate(t *testing.T, doc string) commitstatus.Gate {
	t.Helper()
	var g commitstatus.Gate
	if err := json.Unmarshal([]byte(doc), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

const (
	policyNone     = `"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[],"block_on_missing":true}`
	policyCritical = `"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"critical"},"required":[],"block_on_missing":true}`
	policyHigh     = `"policy":{"block_severity":{"SECRET":"high","VULNERABILITY":"high"},"required":[],"block_on_missing":true}`
)

func TestDescribe(t *testing.T) {
	cases := []struct {
		name  string
		gate  string
		state commitstatus.State
		desc  string
	}{
		{"not blocked", `{"pr_id":7,"blocked":false,"head_sha":"a","reasons":[],"categories":[
			{"scan_type":"SECRET","category":"gitleaks"},{"scan_type":"VULNERABILITY","category":"semgrep"},
			{"scan_type":"VULNERABILITY","category":"trivy"}],` + policyNone + `}`,
			commitstatus.Success, "Not blocked: 3 scans, no blocking finding"},
		{"not blocked, one scan", `{"pr_id":7,"blocked":false,"reasons":[],"categories":[{"scan_type":"SECRET","category":"gitleaks"}],` + policyNone + `}`,
			commitstatus.Success, "Not blocked: 1 scan, no blocking finding"},
		{"not blocked, no scan", `{"pr_id":7,"blocked":false,"reasons":[],"categories":[],` + policyNone + `}`,
			commitstatus.Success, "Not blocked: 0 scans, no blocking finding"},
		{"secrets and a critical vulnerability", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":3,"count":2},
			{"kind":"findings","scan_type":"VULNERABILITY","category":"trivy","scan_id":4,"count":1}],` + policyCritical + `}`,
			commitstatus.Failure, "Blocked: 2 secrets, 1 critical vulnerability"},
		{"findings of two categories add up", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"findings","scan_type":"VULNERABILITY","category":"semgrep","count":3},
			{"kind":"findings","scan_type":"VULNERABILITY","category":"trivy","count":4},
			{"kind":"findings","scan_type":"SECRET","category":"gitleaks","count":1}],` + policyHigh + `}`,
			commitstatus.Failure, "Blocked: 1 high+ secret, 7 high+ vulnerabilities"},
		{"findings and a missing scan", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"findings","scan_type":"SECRET","category":"gitleaks","count":1},
			{"kind":"missing","scan_type":"VULNERABILITY","category":"semgrep","scan_id":null,"count":0}],` + policyNone + `}`,
			commitstatus.Failure, "Blocked: 1 secret; missing: vulnerability/semgrep"},
		{"a failed scan", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"failed","scan_type":"VULNERABILITY","category":"checkov","count":0}],` + policyNone + `}`,
			commitstatus.Failure, "Blocked: failed: vulnerability/checkov"},
		{"only pending", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"pending","scan_type":"SECRET","category":"gitleaks","count":0},
			{"kind":"pending","scan_type":"VULNERABILITY","category":"semgrep","count":0}],` + policyNone + `}`,
			commitstatus.Pending, "Pending: secret/gitleaks, vulnerability/semgrep"},
		{"pending beside findings is a failure", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"findings","scan_type":"SECRET","category":"gitleaks","count":5},
			{"kind":"pending","scan_type":"VULNERABILITY","category":"semgrep","count":0}],` + policyNone + `}`,
			commitstatus.Failure, "Blocked: 5 secrets; pending: vulnerability/semgrep"},
		{"every kind at once", `{"pr_id":7,"blocked":true,"reasons":[
			{"kind":"pending","scan_type":"SECRET","category":"trufflehog","count":0},
			{"kind":"failed","scan_type":"VULNERABILITY","category":"checkov","count":0},
			{"kind":"missing","scan_type":"VULNERABILITY","category":"semgrep","count":0},
			{"kind":"findings","scan_type":"VULNERABILITY","category":"trivy","count":1}],` + policyNone + `}`,
			commitstatus.Failure, "Blocked: 1 vulnerability; missing: vulnerability/semgrep; failed: vulnerability/checkov; pending: secret/trufflehog"},
		{"blocked without a reason", `{"pr_id":7,"blocked":true,"reasons":[],` + policyNone + `}`,
			commitstatus.Failure, "Blocked"},
	}
	for _, c := range cases {
		state, desc := commitstatus.Describe(gate(t, c.gate))
		if state != c.state || desc != c.desc {
			t.Errorf("%s: %s %q, want %s %q", c.name, state, desc, c.state, c.desc)
		}
	}
}

// Categories are up to 100 characters: a gate naming several is cut to
// 140 characters, marked with "...".
func TestDescribeStaysWithin140Characters(t *testing.T) {
	long := strings.Repeat("c", 100)
	g := commitstatus.Gate{PRID: 1, Blocked: true, Reasons: []commitstatus.Reason{
		{Kind: "findings", ScanType: "SECRET", Category: "gitleaks", Count: 2},
		{Kind: "missing", ScanType: "VULNERABILITY", Category: long + "1"},
		{Kind: "missing", ScanType: "VULNERABILITY", Category: long + "2"},
	}}
	_, desc := commitstatus.Describe(g)
	if utf8.RuneCountInString(desc) != commitstatus.MaxDescription || !strings.HasPrefix(desc, "Blocked: 2 secrets; missing: vulnerability/ccc") || !strings.HasSuffix(desc, "...") {
		t.Fatalf("%d characters: %q", utf8.RuneCountInString(desc), desc)
	}
	g.Reasons = []commitstatus.Reason{{Kind: "pending", ScanType: "SECRET", Category: long}, {Kind: "pending", ScanType: "VULNERABILITY", Category: long}}
	state, desc := commitstatus.Describe(g)
	if state != commitstatus.Pending || utf8.RuneCountInString(desc) != commitstatus.MaxDescription || !strings.HasPrefix(desc, "Pending: secret/ccc") {
		t.Fatalf("%s, %d characters: %q", state, utf8.RuneCountInString(desc), desc)
	}
}

func TestFromGateLinksTheDashboard(t *testing.T) {
	g := gate(t, `{"pr_id":4242,"blocked":true,"reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","count":2}],`+policyNone+`}`)
	for _, base := range []string{"https://scangate.example.com", "https://scangate.example.com/"} {
		s := commitstatus.FromGate(g, base)
		want := commitstatus.Status{State: commitstatus.Failure, Description: "Blocked: 2 secrets", TargetURL: "https://scangate.example.com/#/pr/4242"}
		if s != want {
			t.Errorf("%+v, want %+v", s, want)
		}
	}
}
