package api_test

import (
	"fmt"
	"net/url"
	"testing"
)

// TestAdvisoryIDsIgnoreASCIICaseOnly: a vulnerability allowlist covers a
// finding whose name (or alias) is its own ignoring the case of ASCII
// letters only: ghſa-… (U+017F, whose upper case is S) covers neither
// GHSA-… nor its alias, ghsa-… covers both; a listing by name matches
// the same way.
func TestAdvisoryIDsIgnoreASCIICaseOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{Type: "VULNERABILITY", Status: "completed",
		Findings: []string{"GHSA-abcd-efgh-ijkl"}}.body())))
	other := mustOK(t, h.recordWith(scanReq{Type: "VULNERABILITY", Status: "completed", PR: 8},
		`[{"name":"CVE-2099-0001","aliases":["GHSA-mnop-qrst-uvwx"]}]`))
	id := func(sc map[string]any) int { return int(sc["id"].(float64)) }
	for _, name := range []string{"ghſa-abcd-efgh-ijkl", "ghſa-mnop-qrst-uvwx", "GHSA-ABCD-EFGH-IJKſ"} {
		a := mustOK(t, h.allow(fmt.Sprintf(`{"type":"VULNERABILITY","name":%q,"global_":true}`, name)))
		if a["vulnerabilities_updated"] != 0.0 {
			t.Errorf("%s: %v findings updated; want none", name, a["vulnerabilities_updated"])
		}
	}
	for _, s := range []map[string]any{sc, other} {
		if _, vulns, _ := h.counts(id(s)); vulns != 1 {
			t.Errorf("scan %d: %v vulnerabilities; want 1, not suppressed", id(s), vulns)
		}
	}
	for _, name := range []string{"ghsa-ABCD-efgh-ijkl", "Ghsa-Mnop-Qrst-Uvwx"} {
		if a := mustOK(t, h.allow(fmt.Sprintf(`{"type":"VULNERABILITY","name":%q,"global_":true}`, name))); a["vulnerabilities_updated"] != 1.0 {
			t.Errorf("%s: %v findings updated; want 1", name, a["vulnerabilities_updated"])
		}
	}
	for _, s := range []map[string]any{sc, other} {
		if _, vulns, _ := h.counts(id(s)); vulns != 0 {
			t.Errorf("scan %d: %v vulnerabilities; want 0", id(s), vulns)
		}
	}
	h.noDrift()
	p := decodePage(t, h.read("list-allowlists", &h.admin, nil, "name="+url.QueryEscape("GHSA-abcd-efgh-ijkl")))
	if len(p.Items) != 1 || p.Items[0]["name"] != "ghsa-ABCD-efgh-ijkl" {
		t.Errorf("allowlists named GHSA-abcd-efgh-ijkl: %v; want ghsa-ABCD-efgh-ijkl alone", p.Items)
	}
}

// TestTokenNamesFoldAsEmailAddresses: a user's personal token names are
// unique under the rules of e-mail addresses (NFKC and full case
// folding): straße and STRASSE, full-width and plain letters, composed
// and decomposed accents are one name; a name freed by revoking is free
// again in any of its forms.
func TestTokenNamesFoldAsEmailAddresses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for first, same := range map[string][]string{
		"straße":             {"STRASSE", "Strasse", "strasse"},
		"ｃｉ－ｄｅｐｌｏｙ":          {"ci-deploy", "CI-Deploy"},
		"caf\u00e9":          {"cafe\u0301", "CAFE\u0301"},
		"\u212aelvin":        {"kelvin", "KELVIN"},
		"\u03a3\u03c3\u03c2": {"\u03c3\u03c3\u03c3", "\u03a3\u03a3\u03a3"},
	} {
		tok := mustOK(t, h.createToken(&h.admin, fmt.Sprintf(`{"name":%q}`, first)))
		for _, name := range same {
			if resp := h.createToken(&h.admin, fmt.Sprintf(`{"name":%q}`, name)); resp.StatusCode != 409 {
				t.Errorf("%q beside %q: %d %s; want 409", name, first, resp.StatusCode, resp.Body)
			}
		}
		r := jsonReq(&h.admin, "")
		r.params = map[string]string{"token_id": fmt.Sprint(tok["id"])}
		if resp := h.call("revoke-token", r); resp.StatusCode != 204 {
			t.Fatalf("revoke: %d %s", resp.StatusCode, resp.Body)
		}
		mustOK(t, h.createToken(&h.admin, fmt.Sprintf(`{"name":%q}`, same[0])))
	}
}
