package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sentLog is the SARIF log an upload sent: the inline body's, or else the
// presigned PUT's.
func sentLog(t *testing.T, f *fakeAPI, presigned bool) []byte {
	t.Helper()
	gz := f.put
	if !presigned {
		var body struct {
			SARIF string `json:"sarif"`
		}
		if err := json.Unmarshal(f.bodies["POST /api/pr/scan/sarif"], &body); err != nil {
			t.Fatal(err)
		}
		var err error
		if gz, err = base64.StdEncoding.DecodeString(body.SARIF); err != nil {
			t.Fatal(err)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lineHashes is the primaryLocationLineHash of each result of a log's
// first run, "" for none.
func lineHashes(t *testing.T, log []byte) []string {
	t.Helper()
	var doc struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	var hashes []string
	for _, r := range doc.Runs[0].Results {
		hashes = append(hashes, r.PartialFingerprints["primaryLocationLineHash"])
	}
	return hashes
}

// banditLog is a log of bandit's shape: a finding at a line of app.py, one
// whose hash the scanner gave, one in a file that is not in the checkout.
func banditLog(line int) string {
	at := func(file string, line int, extra string) string {
		return `{"ruleId":"B105","level":"error","message":{"text":"Possible hardcoded password"},"locations":[{"physicalLocation":` +
			`{"artifactLocation":{"uri":"` + file + `","uriBaseId":"%SRCROOT%"},"region":{"startLine":` + jsonInt(line) + `}}}]` + extra + `}`
	}
	return `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Bandit","rules":[{"id":"B105"}]}},` +
		`"originalUriBaseIds":{"%SRCROOT%":{"uri":"file:///home/runner/work/app/app/"}},"results":[` +
		at("src/app.py", line, "") + "," +
		at("src/app.py", 1, `,"partialFingerprints":{"primaryLocationLineHash":"0123456789abcdef:1"}`) + "," +
		at("src/generated.py", 4, "") + `]}]}`
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// write writes a file, making its directory.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// upload adds GitHub's primaryLocationLineHash to the results that lack
// one, from the files of the checkout: a finding's hash stays the same
// when lines are inserted above it (inline and through a presigned
// upload); a hash given is kept; a result whose file is not in the checkout
// is sent without one and said so; --no-fingerprints sends the log as it is.
func TestUploadFingerprints(t *testing.T) {
	f := newFakeAPI(t)
	c := github(t, f.url())
	checkout := t.TempDir()
	app := "import os\n\n\npassword = \"hunter2\"\nprint(password)\n"
	write(t, filepath.Join(checkout, "src", "app.py"), app)
	log := filepath.Join(t.TempDir(), "bandit.sarif")
	write(t, log, banditLog(4))

	code, _, errOut := c.run(t, "upload", "--no-gate", "--checkout", checkout, log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	before := lineHashes(t, sentLog(t, f, false))
	if len(before) != 3 || before[0] == "" || !strings.HasSuffix(before[0], ":1") || before[1] != "0123456789abcdef:1" || before[2] != "" {
		t.Fatalf("hashes sent %q", before)
	}
	if want := log + ": no primaryLocationLineHash computed for 1 of 3 results with a line in a file (first: src/generated.py: no such file in the checkout " + checkout + ")\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}

	// Three lines inserted above the finding: the scanner now reports line
	// 7, and the hash is the same. Here the checkout is the working
	// directory and the log a gzip sent through a presigned upload.
	write(t, filepath.Join(checkout, "src", "app.py"), "# a header\n\"\"\"docs\"\"\"\n\n"+app)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(banditLog(7)))
	_ = zw.Close()
	write(t, log+".gz", gz.String())
	t.Chdir(checkout)
	if code, _, errOut := c.run(t, "upload", "--no-gate", "--presigned", log+".gz"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	after := lineHashes(t, sentLog(t, f, true))
	if len(after) != 3 || after[0] != before[0] || after[1] != before[1] || after[2] != "" {
		t.Errorf("hashes after lines were inserted above %q, before %q", after, before)
	}

	// The line itself changed: another hash.
	write(t, filepath.Join(checkout, "src", "app.py"), strings.Replace(app, "hunter2", "hunter3", 1))
	if code, _, errOut := c.run(t, "upload", "--no-gate", log); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if changed := lineHashes(t, sentLog(t, f, false)); changed[0] == before[0] || changed[0] == "" {
		t.Errorf("the line changed, its hash did not: %q", changed[0])
	}

	// --no-fingerprints: the log as written.
	if code, _, errOut := c.run(t, "upload", "--no-gate", "--no-fingerprints", log); code != exitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if sent := sentLog(t, f, false); string(sent) != banditLog(4) {
		t.Errorf("--no-fingerprints sent\n%s", sent)
	}

	if code, _, errOut := c.run(t, "upload", "--checkout", filepath.Join(checkout, "missing"), log); code != exitError || !strings.Contains(errOut, "the checkout") {
		t.Errorf("a missing checkout: exit %d %q", code, errOut)
	}
}
