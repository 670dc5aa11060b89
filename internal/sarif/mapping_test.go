package sarif

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

const (
	secretT = scangate.ScanSecret
	vulnT   = scangate.ScanVulnerability
)

// logOf builds a SARIF 2.1.0 log of the given runs (JSON objects).
func logOf(runs ...string) string {
	return `{"version":"2.1.0","$schema":"https://json.schemastore.org/sarif-2.1.0.json","runs":[` + strings.Join(runs, ",") + `]}`
}

// runOf builds a run of a tool (a driver's members) and results.
func runOf(driver string, results ...string) string {
	return `{"tool":{"driver":{` + driver + `}},"results":[` + strings.Join(results, ",") + `]}`
}

// res builds a result of a rule at path:line with extra members.
func res(rule, path string, line int, extra string) string {
	s := `{"ruleId":"` + rule + `","message":{"text":"found"}`
	if path != "" {
		s += `,"locations":[{"physicalLocation":{"artifactLocation":{"uri":"` + path + `"},"region":{"startLine":` + itoa(line) + `}}}]`
	}
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

// secretRes builds a result whose region's snippet holds value.
func secretRes(rule, path string, line int, value, extra string) string {
	s := `{"ruleId":"` + rule + `","message":{"text":"found"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"` +
		path + `"},"region":{"startLine":` + itoa(line) + `,"snippet":{"text":` + quote(value) + `}}}}]`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func loc(rule, path, line string) string {
	s := sha256.Sum256([]byte(rule + "|" + path + "|" + line))
	return "loc:" + hex.EncodeToString(s[:])
}

func ln(n int64) *int64 { return &n }

func mustRead(t *testing.T, log string) *Report {
	t.Helper()
	rep, err := readLog(strings.NewReader(log), Options{Pointer: "/sarif"})
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, log)
	}
	if rep.Results != rep.Skipped+rep.Recorded+rep.Duplicates || rep.Recorded != len(flat(rep)) {
		t.Fatalf("counts do not add up: %+v", rep)
	}
	return rep
}

func TestMapping(t *testing.T) {
	gitleaks := `"name":"gitleaks","semanticVersion":"v8.0.0"`
	bandit := `"name":"Bandit","version":"1.9.4"`
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	cases := []struct {
		name string
		log  string
		want []finding
		// counts: results, skipped, duplicates, suppressed in source
		counts [4]int
	}{
		{
			name: "kind: absent and fail recorded, every other kind skipped",
			log: logOf(runOf(bandit,
				res("B1", "a.py", 1, ""),
				res("B2", "a.py", 2, `"kind":"fail"`),
				res("B3", "a.py", 3, `"kind":"pass"`),
				res("B4", "a.py", 4, `"kind":"open"`),
				res("B5", "a.py", 5, `"kind":"review"`),
				res("B6", "a.py", 6, `"kind":"informational"`),
				res("B7", "a.py", 7, `"kind":"notApplicable"`))),
			want: []finding{
				{Type: vulnT, Name: "B1", Rule: "B1", Path: "a.py", Line: ln(1)},
				{Type: vulnT, Name: "B2", Rule: "B2", Path: "a.py", Line: ln(2)},
			},
			counts: [4]int{7, 5, 0, 0},
		},
		{
			name: "baselineState absent skipped; new, unchanged, updated recorded",
			log: logOf(runOf(bandit,
				res("B1", "a.py", 1, `"baselineState":"absent"`),
				res("B2", "a.py", 2, `"baselineState":"new"`),
				res("B3", "a.py", 3, `"baselineState":"unchanged"`),
				res("B4", "a.py", 4, `"baselineState":"updated"`),
				res("B5", "a.py", 5, `"kind":"fail","baselineState":"absent"`))),
			want: []finding{
				{Type: vulnT, Name: "B2", Rule: "B2", Path: "a.py", Line: ln(2)},
				{Type: vulnT, Name: "B3", Rule: "B3", Path: "a.py", Line: ln(3)},
				{Type: vulnT, Name: "B4", Rule: "B4", Path: "a.py", Line: ln(4)},
			},
			counts: [4]int{5, 2, 0, 0},
		},
		{
			name: "suppressions: status absent or accepted suppresses, underReview and rejected do not",
			log: logOf(runOf(bandit,
				res("B1", "a.py", 1, `"suppressions":[{"kind":"inSource"}]`),
				res("B2", "a.py", 2, `"suppressions":[{"kind":"inSource","status":"accepted"}]`),
				res("B3", "a.py", 3, `"suppressions":[{"kind":"inSource","status":"underReview"}]`),
				res("B4", "a.py", 4, `"suppressions":[{"kind":"external","status":"rejected"}]`),
				res("B5", "a.py", 5, `"suppressions":[{"kind":"external","status":"rejected"},{"kind":"external","status":"accepted"}]`),
				res("B6", "a.py", 6, `"suppressions":[]`))),
			want: []finding{
				{Type: vulnT, Name: "B1", Rule: "B1", Path: "a.py", Line: ln(1), SuppressedInSource: true},
				{Type: vulnT, Name: "B2", Rule: "B2", Path: "a.py", Line: ln(2), SuppressedInSource: true},
				{Type: vulnT, Name: "B3", Rule: "B3", Path: "a.py", Line: ln(3)},
				{Type: vulnT, Name: "B4", Rule: "B4", Path: "a.py", Line: ln(4)},
				{Type: vulnT, Name: "B5", Rule: "B5", Path: "a.py", Line: ln(5), SuppressedInSource: true},
				{Type: vulnT, Name: "B6", Rule: "B6", Path: "a.py", Line: ln(6)},
			},
			counts: [4]int{6, 0, 0, 3},
		},
		{
			name: "secret scanners: sha256 of the snippet, else contextRegion's",
			log: logOf(
				runOf(gitleaks, secretRes("github-pat", ".env", 2, token, "")),
				runOf(`"name":"TruffleHog","version":"3.88.0"`, `{"ruleId":"Github","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"b.txt"},"region":{"startLine":4},"contextRegion":{"startLine":3,"snippet":{"text":"`+token+`\n"}}}}]}`),
				runOf(`"name":"detect-secrets"`, secretRes("KeywordDetector", "c.txt", 1, "hunter2hunter2", "")),
			),
			want: []finding{
				{Type: secretT, Name: sha(token), Rule: "github-pat", Path: ".env", Line: ln(2)},
				{Type: secretT, Name: sha(token + "\n"), Rule: "Github", Path: "b.txt", Line: ln(4)},
				{Type: secretT, Name: sha("hunter2hunter2"), Rule: "KeywordDetector", Path: "c.txt", Line: ln(1)},
			},
			counts: [4]int{3, 0, 0, 0},
		},
		{
			name:   "a JSON escape in the value is hashed as the value it stands for",
			log:    logOf(runOf(gitleaks, `{"ruleId":"generic","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":1,"snippet":{"text":"p\u00e4ss\"w\\0rd\/x"}}}}]}`)),
			want:   []finding{{Type: secretT, Name: sha("päss\"w\\0rd/x"), Rule: "generic", Path: "a", Line: ln(1)}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name: "redacted values: REDACTED, ending in ..., masked with *** fall back to loc:",
			log: logOf(runOf(gitleaks,
				secretRes("github-pat", "a.env", 1, "REDACTED", ""),
				secretRes("github-pat", "a.env", 2, "ghp_01234...", ""),
				secretRes("github-pat", "a.env", 3, "ghp_****************1234", ""),
				secretRes("github-pat", "a.env", 4, "ghp_0123…", ""),
				`{"ruleId":"github-pat","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.env"}}}]}`,
				`{"ruleId":"github-pat","message":{"text":"x"}}`,
				secretRes("github-pat", "a.env", 7, "", ""))),
			want: []finding{
				{Type: secretT, Name: loc("github-pat", "a.env", "1"), Rule: "github-pat", Path: "a.env", Line: ln(1)},
				{Type: secretT, Name: loc("github-pat", "a.env", "2"), Rule: "github-pat", Path: "a.env", Line: ln(2)},
				{Type: secretT, Name: loc("github-pat", "a.env", "3"), Rule: "github-pat", Path: "a.env", Line: ln(3)},
				{Type: secretT, Name: loc("github-pat", "a.env", "4"), Rule: "github-pat", Path: "a.env", Line: ln(4)},
				{Type: secretT, Name: loc("github-pat", "a.env", ""), Rule: "github-pat", Path: "a.env"},
				{Type: secretT, Name: loc("github-pat", "", ""), Rule: "github-pat"},
				{Type: secretT, Name: loc("github-pat", "a.env", "7"), Rule: "github-pat", Path: "a.env", Line: ln(7)},
			},
			counts: [4]int{7, 0, 0, 0},
		},
		{
			name: "ggshield: partialFingerprints secret/v1",
			log: logOf(`{"tool":{"driver":{"organization":"GitGuardian","name":"ggshield","version":"1.38.0"},"extensions":[{"name":"secret","version":"2.130.0"}]},"results":[` +
				`{"ruleId":"GitHub Token","level":"error","message":{"text":"Secret detected: GitHub Token.","markdown":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"config.py"},"region":{"startLine":3,"startColumn":10,"endLine":3,"endColumn":50}}}],"relatedLocations":[{"id":0,"physicalLocation":{"artifactLocation":{"uri":"config.py"},"region":{"startLine":3}},"message":{"text":"apikey"}}],"partialFingerprints":{"secret/v1":"9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"}}]}`),
			want:   []finding{{Type: secretT, Name: "ggshield:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Rule: "GitHub Token", Path: "config.py", Line: ln(3)}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name: "trivy: the rule named Secret is a secret, package advisories are vulnerabilities",
			log: logOf(`{"tool":{"driver":{"name":"Trivy","fullName":"Trivy Vulnerability Scanner","version":"0.58.1","rules":[` +
				`{"id":"CVE-2021-44228","name":"LanguageSpecificPackageVulnerability","shortDescription":{"text":"log4j"},"properties":{"tags":["vulnerability","security","CRITICAL"],"precision":"very-high","security-severity":"10.0"}},` +
				`{"id":"aws-access-key-id","name":"Secret","shortDescription":{"text":"AWS Access Key ID"},"properties":{"tags":["secret","security","CRITICAL"]}},` +
				`{"id":"github-pat","name":"Secret","properties":{"tags":["security"]}}]}},` +
				`"results":[` +
				`{"ruleId":"CVE-2021-44228","ruleIndex":0,"level":"error","message":{"text":"Package: log4j-core"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"pom.xml","uriBaseId":"ROOTPATH"},"region":{"startLine":1,"startColumn":1,"endLine":1,"endColumn":1}},"message":{"text":"pom.xml: log4j-core@2.14.1"}}]},` +
				`{"ruleId":"aws-access-key-id","ruleIndex":1,"level":"error","message":{"text":"Match: AWS_ACCESS_KEY_ID=********************"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"deploy/.env","uriBaseId":"ROOTPATH"},"region":{"startLine":2,"startColumn":1,"endLine":2,"endColumn":1}}}]},` +
				`{"ruleId":"github-pat","ruleIndex":2,"message":{"text":"Match: ****"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"ci.sh","uriBaseId":"ROOTPATH"},"region":{"startLine":9}}}]}` +
				`],"columnKind":"utf16CodeUnits","originalUriBaseIds":{"ROOTPATH":{"uri":"file:///home/runner/work/app/app/"}}}`),
			want: []finding{
				{Type: secretT, Name: loc("aws-access-key-id", "deploy/.env", "2"), Rule: "aws-access-key-id", Path: "deploy/.env", Line: ln(2)},
				{Type: secretT, Name: loc("github-pat", "ci.sh", "9"), Rule: "github-pat", Path: "ci.sh", Line: ln(9)},
				{Type: vulnT, Name: "CVE-2021-44228", Rule: "CVE-2021-44228", Path: "pom.xml", Line: ln(1)},
			},
			counts: [4]int{3, 0, 0, 0},
		},
		{
			name: "a rule or a result tagged secret makes a secret in any tool",
			log: logOf(`{"tool":{"driver":{"name":"Semgrep OSS","semanticVersion":"1.180.0","rules":[{"id":"hardcoded-token","properties":{"tags":["Secret"]}},{"id":"sqli","properties":{"tags":["security"]}}]}},"results":[` +
				secretRes("hardcoded-token", "app.py", 3, `TOKEN = "abc123abc123"`, "") + "," +
				secretRes("sqli", "app.py", 9, `cursor.execute(q % x)`, "") + "," +
				secretRes("custom", "app.py", 12, `KEY = "zzz999zzz999"`, `"properties":{"tags":["secret","other"]}`) + `]}`),
			want: []finding{
				{Type: secretT, Name: sha(`TOKEN = "abc123abc123"`), Rule: "hardcoded-token", Path: "app.py", Line: ln(3)},
				{Type: secretT, Name: sha(`KEY = "zzz999zzz999"`), Rule: "custom", Path: "app.py", Line: ln(12)},
				{Type: vulnT, Name: "sqli", Rule: "sqli", Path: "app.py", Line: ln(9)},
			},
			counts: [4]int{3, 0, 0, 0},
		},
		{
			name: "null tags are no tags, as any other null member is absent",
			log: logOf(`{"tool":{"driver":{"name":"Semgrep OSS","rules":[{"id":"sqli","properties":{"tags":null}}]}},"results":[` +
				secretRes("sqli", "app.py", 9, `cursor.execute(q % x)`, `"properties":{"tags":null,"cwe":"CWE-89"}`) + `]}`),
			want: []finding{
				{Type: vulnT, Name: "sqli", Rule: "sqli", Path: "app.py", Line: ln(9)},
			},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name: "osv-scanner: no location, deprecatedIds as aliases",
			log: logOf(`{"tool":{"driver":{"informationUri":"https://github.com/google/osv-scanner","name":"osv-scanner","version":"2.0.2","rules":[` +
				`{"id":"CVE-2022-24713","name":"CVE-2022-24713","deprecatedIds":["CVE-2022-24713","RUSTSEC-2022-0013","GHSA-m5pq-gvj9-9vr8"]},` +
				`{"id":"GO-2022-0493","deprecatedIds":["GO-2022-0493","CVE-2022-29526","GHSA-p782-xgp4-8hr8"]}]}},"results":[` +
				`{"ruleId":"CVE-2022-24713","ruleIndex":0,"level":"warning","message":{"text":"Package 'regex@1.5.1' is vulnerable"}},` +
				`{"ruleId":"GO-2022-0493","ruleIndex":1,"message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///home/runner/work/app/app/go.mod"}}}]}` +
				`],"invocations":[{"executionSuccessful":true,"workingDirectory":{"uri":"file:///home/runner/work/app/app"}}]}`),
			want: []finding{
				{Type: vulnT, Name: "CVE-2022-24713", Aliases: []string{"RUSTSEC-2022-0013", "GHSA-m5pq-gvj9-9vr8"}, Rule: "CVE-2022-24713"},
				{Type: vulnT, Name: "GO-2022-0493", Aliases: []string{"CVE-2022-29526", "GHSA-p782-xgp4-8hr8"}, Rule: "GO-2022-0493", Path: "go.mod"},
			},
			counts: [4]int{2, 0, 0, 0},
		},
		{
			name: "advisory ids in tags and properties: the rule id, else the first alias (deprecatedIds, tags, then properties by name)",
			log: logOf(`{"tool":{"driver":{"name":"scanner","rules":[` +
				`{"id":"GHSA-jfh8-c2jp-5v3q","properties":{"tags":["security","CVE-2021-44228"]}},` +
				`{"id":"ssc-log4shell","properties":{"cve":"CVE-2021-44228","aliases":["GHSA-jfh8-c2jp-5v3q","not-an-id"],"score":10,"nested":{"id":"CVE-2000-0001"}}},` +
				`{"id":"python.flask.debug","properties":{"tags":["CWE-489","security"]}}]}},"results":[` +
				res("GHSA-jfh8-c2jp-5v3q", "pom.xml", 1, "") + "," +
				res("ssc-log4shell", "pom.xml", 2, "") + "," +
				res("python.flask.debug", "app.py", 3, `"properties":{"tags":["pysec-2021-0001"]}`) + "," +
				res("python.flask.debug", "app.py", 4, "") + `]}`),
			want: []finding{
				{Type: vulnT, Name: "GHSA-jfh8-c2jp-5v3q", Aliases: []string{"CVE-2021-44228"}, Rule: "GHSA-jfh8-c2jp-5v3q", Path: "pom.xml", Line: ln(1)},
				{Type: vulnT, Name: "GHSA-jfh8-c2jp-5v3q", Aliases: []string{"CVE-2021-44228"}, Rule: "ssc-log4shell", Path: "pom.xml", Line: ln(2)},
				{Type: vulnT, Name: "pysec-2021-0001", Rule: "python.flask.debug", Path: "app.py", Line: ln(3)},
				{Type: vulnT, Name: "python.flask.debug", Rule: "python.flask.debug", Path: "app.py", Line: ln(4)},
			},
			counts: [4]int{4, 0, 0, 0},
		},
		{
			name: "CodeQL: %SRCROOT% unresolved, rules of an extension by rule.toolComponent, fingerprints only",
			log: logOf(`{"tool":{"driver":{"name":"CodeQL","semanticVersion":"2.20.1","rules":[]},"extensions":[{"name":"codeql/javascript-queries","semanticVersion":"1.3.0","rules":[` +
				`{"id":"js/xss","name":"js/xss","properties":{"tags":["security","external/cwe/cwe-079"],"precision":"high"}},` +
				`{"id":"js/hardcoded-credentials","properties":{"tags":["security","external/cwe/cwe-798"]}}]}]},` +
				`"results":[{"ruleId":"js/hardcoded-credentials","rule":{"id":"js/hardcoded-credentials","index":1,"toolComponent":{"index":0}},"message":{"text":"The hard-coded value flows to a credential."},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/db.js","uriBaseId":"%SRCROOT%","index":0},"region":{"startLine":5,"startColumn":3,"endColumn":20}}}],"partialFingerprints":{"primaryLocationLineHash":"39fa2ee980eb94b0:1","primaryLocationStartColumnFingerprint":"2"}},` +
				`{"ruleId":"js/xss","rule":{"id":"js/xss","index":0,"toolComponent":{"index":0}},"message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/a%20b.js","uriBaseId":"%SRCROOT%"},"region":{"startLine":7}}}]}],` +
				`"columnKind":"utf16CodeUnits","properties":{"semmle.formatSpecifier":"sarif-latest"}}`),
			want: []finding{
				{Type: vulnT, Name: "js/hardcoded-credentials", Rule: "js/hardcoded-credentials", Path: "src/db.js", Line: ln(5)},
				{Type: vulnT, Name: "js/xss", Rule: "js/xss", Path: "src/a b.js", Line: ln(7)},
			},
			counts: [4]int{2, 0, 0, 0},
		},
		{
			name: "uriBaseId resolved through originalUriBaseIds to the checkout root",
			log: logOf(`{"tool":{"driver":{"name":"scanner"}},"originalUriBaseIds":{"SRCROOT":{"uri":"file:///home/runner/work/app/app/"},"LIB":{"uri":"lib/","uriBaseId":"SRCROOT"},"DEEP":{"uri":"x/","uriBaseId":"LIB"},"REL":{"uri":"vendor/"}},"results":[` +
				`{"ruleId":"R1","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.go","uriBaseId":"SRCROOT"}}}]},` +
				`{"ruleId":"R2","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"b.go","uriBaseId":"LIB"}}}]},` +
				`{"ruleId":"R3","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"./c.go","uriBaseId":"DEEP"}}}]},` +
				`{"ruleId":"R4","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"d.go","uriBaseId":"REL"}}}]},` +
				`{"ruleId":"R5","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///home/runner/work/app/app/cmd/e.go"}}}]},` +
				`{"ruleId":"R6","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///elsewhere/f.go"}}}]},` +
				`{"ruleId":"R7","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"g/../h.go","uriBaseId":"UNKNOWN"}}}]},` +
				`{"ruleId":"R8","message":{"text":"x"},"locations":[{"logicalLocations":[{"name":"f"}]}]}` +
				`]}`),
			want: []finding{
				{Type: vulnT, Name: "R1", Rule: "R1", Path: "a.go"},
				{Type: vulnT, Name: "R2", Rule: "R2", Path: "lib/b.go"},
				{Type: vulnT, Name: "R3", Rule: "R3", Path: "lib/x/c.go"},
				{Type: vulnT, Name: "R4", Rule: "R4", Path: "vendor/d.go"},
				{Type: vulnT, Name: "R5", Rule: "R5", Path: "cmd/e.go"},
				{Type: vulnT, Name: "R6", Rule: "R6", Path: "/elsewhere/f.go"},
				{Type: vulnT, Name: "R7", Rule: "R7", Path: "h.go"},
				{Type: vulnT, Name: "R8", Rule: "R8"},
			},
			counts: [4]int{8, 0, 0, 0},
		},
		{
			name: "runs keep their own rules: ruleIndex is run-local",
			log: logOf(
				`{"tool":{"driver":{"name":"scanner","version":"1","rules":[{"id":"A"},{"id":"CVE-2020-0001","deprecatedIds":["GHSA-aaaa-bbbb-cccc"]}]}},"results":[{"ruleIndex":1,"message":{"text":"x"}}]}`,
				`{"tool":{"driver":{"name":"scanner","version":"1","rules":[{"id":"CVE-2020-0002","properties":{"tags":["GO-2020-0002"]}}]}},"results":[{"ruleIndex":0,"message":{"id":"default"}},{"ruleId":"CVE-2020-0009","ruleIndex":7,"message":{"text":"no such rule"}}]}`),
			want: []finding{
				{Type: vulnT, Name: "CVE-2020-0001", Aliases: []string{"GHSA-aaaa-bbbb-cccc"}, Rule: "CVE-2020-0001"},
				{Type: vulnT, Name: "CVE-2020-0002", Aliases: []string{"GO-2020-0002"}, Rule: "CVE-2020-0002"},
				{Type: vulnT, Name: "CVE-2020-0009", Rule: "CVE-2020-0009"},
			},
			counts: [4]int{3, 0, 0, 0},
		},
		{
			name:   "results before the tool, a hierarchical rule id",
			log:    logOf(`{"results":[{"ruleId":"SEC101/032","message":{"text":"x"}}],"tool":{"driver":{"name":"spmi","rules":[{"id":"SEC101","properties":{"tags":["secret"]}}]}}}`),
			want:   []finding{{Type: secretT, Name: loc("SEC101/032", "", ""), Rule: "SEC101/032"}},
			counts: [4]int{1, 0, 0, 0},
		},
		{
			name: "duplicates within one upload recorded once, across runs too; vulnerability names ignore case",
			log: logOf(
				runOf(gitleaks,
					secretRes("github-pat", "a.env", 1, token, ""),
					secretRes("generic-api-key", "a.env", 1, token, ""),
					secretRes("github-pat", "a.env", 2, token, ""),
					secretRes("github-pat", "b.env", 1, token, "")),
				runOf(bandit,
					res("CVE-2021-0001", "a.py", 1, `"suppressions":[{"kind":"inSource"}]`),
					res("cve-2021-0001", "a.py", 1, `"properties":{"tags":["GHSA-2222-3333-4444"]}`),
					res("CVE-2021-0001", "a.py", 2, `"suppressions":[{"kind":"inSource"}]`),
					res("CVE-2021-0001", "a.py", 2, `"suppressions":[{"kind":"inSource","status":"accepted"}]`)),
				runOf(`"name":"gitleaks","semanticVersion":"v8.0.0"`, secretRes("github-pat", "a.env", 1, token, ""))),
			want: []finding{
				{Type: secretT, Name: sha(token), Rule: "github-pat", Path: "a.env", Line: ln(1)},
				{Type: secretT, Name: sha(token), Rule: "github-pat", Path: "a.env", Line: ln(2)},
				{Type: secretT, Name: sha(token), Rule: "github-pat", Path: "b.env", Line: ln(1)},
				{Type: vulnT, Name: "CVE-2021-0001", Aliases: []string{"GHSA-2222-3333-4444"}, Rule: "CVE-2021-0001", Path: "a.py", Line: ln(1)},
				{Type: vulnT, Name: "CVE-2021-0001", Rule: "CVE-2021-0001", Path: "a.py", Line: ln(2), SuppressedInSource: true},
			},
			counts: [4]int{9, 0, 4, 1},
		},
		{
			name:   "no runs, empty runs, null results",
			log:    logOf(`{"tool":{"driver":{"name":"empty"}},"results":null}`, `{"tool":{"driver":{"name":"empty"}},"results":[]}`),
			counts: [4]int{0, 0, 0, 0},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := mustRead(t, c.log)
			if !reflect.DeepEqual(flat(rep), c.want) {
				t.Errorf("findings:\n%s\nwant:\n%s", show(flat(rep)), show(c.want))
			}
			got := [4]int{rep.Results, rep.Skipped, rep.Duplicates, rep.SuppressedInSource}
			if got != c.counts {
				t.Errorf("results, skipped, duplicates, suppressed = %v, want %v", got, c.counts)
			}
		})
	}
}

func show(fs []finding) string {
	var b strings.Builder
	for _, f := range fs {
		line := "-"
		if f.Line != nil {
			line = itoa(int(*f.Line))
		}
		fmt.Fprintf(&b, "  %s %s %v rule=%s path=%q line=%s suppressed=%v\n", f.Type, f.Name, f.Aliases, f.Rule, f.Path, line, f.SuppressedInSource)
	}
	return b.String()
}

func TestTools(t *testing.T) {
	rep := mustRead(t, logOf(
		runOf(`"name":"gitleaks","semanticVersion":"v8.0.0"`, secretRes("r", "a", 1, "v1v1v1v1", "")),
		runOf(`"name":"Semgrep OSS","semanticVersion":"1.180.0","version":"1.180.0-dev"`, res("r", "a", 1, ""), res("s", "a", 1, `"kind":"pass"`)),
		runOf(`"name":"gitleaks","semanticVersion":"v8.0.0"`, res("r", "b", 1, "")),
		runOf(`"name":"Semgrep OSS","semanticVersion":"1.180.0","version":"1.180.0-dev","rules":[{"id":"t","properties":{"tags":["secret"]}}]`, secretRes("t", "a", 2, "v2v2v2v2", "")),
		runOf(`"name":"checkov"`, res("s", "a", 1, `"kind":"pass"`)),
	))
	want := []toolTypes{
		{Name: "gitleaks", Version: "v8.0.0", Types: []scangate.ScanType{secretT}},
		{Name: "Semgrep OSS", Version: "1.180.0-dev", Types: []scangate.ScanType{secretT, vulnT}},
		{Name: "checkov"},
	}
	if !reflect.DeepEqual(tools(rep), want) {
		t.Errorf("tools %+v, want %+v", tools(rep), want)
	}
	// Every run is reported, with its tool's type and its category, a run
	// without a finding too.
	var runs []string
	for _, run := range rep.Runs {
		runs = append(runs, fmt.Sprintf("%d %s %s %s %s %d/%d %v", run.Index, run.Tool.Name, run.Tool.Version, run.Type, run.Category,
			len(run.Secrets), len(run.Vulnerabilities), run.Types()))
	}
	if wantRuns := []string{
		"0 gitleaks v8.0.0 SECRET gitleaks 1/0 [SECRET]",
		"1 Semgrep OSS 1.180.0-dev VULNERABILITY semgrep-oss 0/1 [VULNERABILITY]",
		"2 gitleaks v8.0.0 SECRET gitleaks 1/0 [SECRET]",
		"3 Semgrep OSS 1.180.0-dev VULNERABILITY semgrep-oss 1/0 [VULNERABILITY SECRET]",
		"4 checkov  VULNERABILITY checkov 0/0 [VULNERABILITY]",
	}; !reflect.DeepEqual(runs, wantRuns) {
		t.Errorf("runs:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(wantRuns, "\n"))
	}
}

// The secret's value is hashed and dropped: it is nowhere in what Read
// returns, whatever the log, and in none of its errors.
func TestSecretValueNeverKept(t *testing.T) {
	const value = "ghp_ZZZZsecretvalueZZZZ0123456789abcdef"
	good := secretRes("github-pat", "a.env", 1, value, "")
	rep := mustRead(t, logOf(runOf(`"name":"gitleaks"`, good, good)))
	if dump := fmt.Sprintf("%#v", *rep); strings.Contains(dump, value) || strings.Contains(dump, value[4:20]) {
		t.Errorf("the report holds the value: %s", dump)
	}
	bad := []string{
		logOf(runOf(`"name":"gitleaks"`, good, secretRes("github-pat", "a.env", 0, value, ""))),
		logOf(runOf(`"name":"gitleaks"`, secretRes("github-pat", "a.env", 1, value, `"kind":"`+value+`"`))),
		logOf(runOf(`"name":"gitleaks"`, `{"ruleId":"`+value+`","message":{"text":"`+value+`"},"kind":7}`)),
		logOf(runOf(`"name":"gitleaks"`, `{"ruleId":1,"message":{"text":"`+value+`"}}`)),
		logOf(runOf(`"name":"gitleaks"`, good+`,{"ruleId":"`+value+`"`)),
		logOf(runOf(`"name":"gitleaks"`, good+`,{"ruleId":"`+value+`" x}`)),
		logOf(runOf(`"name":"`+value+`"`, `{"ruleId":"`+value+strings.Repeat("x", 300)+`","message":{"text":"x"}}`)),
		`{"version":"` + value + `","runs":[]}`,
	}
	for i, log := range bad {
		_, err := readLog(strings.NewReader(log), Options{Pointer: "/sarif"})
		if err == nil {
			t.Errorf("%d: no error", i)
			continue
		}
		if msg := fmt.Sprintf("%v %#v", err, err); strings.Contains(msg, value) || strings.Contains(msg, value[4:12]) {
			t.Errorf("%d: the error quotes the value: %s", i, msg)
		}
		var ie *InputError
		if errorsAs(err, &ie) && ie.Err != nil && strings.Contains(ie.Err.Error(), value[4:12]) {
			t.Errorf("%d: the cause quotes the value: %v", i, ie.Err)
		}
	}
}

func errorsAs[T error](err error, target *T) bool { return errors.As(err, target) }
