package sarif

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
)

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func b64gz(t testing.TB, s string) string { return base64.StdEncoding.EncodeToString(gz(t, s)) }

func results(n int, r string) string {
	return strings.TrimSuffix(strings.Repeat(r+",", n), ",")
}

// A log that is JSON but not SARIF 2.1.0 is a SchemaError pointing into it.
func TestSchemaErrors(t *testing.T) {
	ok := `{"ruleId":"R","message":{"text":"x"}}`
	run := func(results ...string) string { return runOf(`"name":"t"`, results...) }
	cases := []struct{ log, pointer string }{
		{`[]`, "/sarif"},
		{`"text"`, "/sarif"},
		{`{"runs":[]}`, "/sarif/version"},
		{`{"version":"2.0.0","runs":[]}`, "/sarif/version"},
		{`{"version":2.1,"runs":[]}`, "/sarif/version"},
		{`{"version":"2.1.0"}`, "/sarif/runs"},
		{`{"version":"2.1.0","runs":{}}`, "/sarif/runs"},
		{`{"version":"2.1.0","runs":[7]}`, "/sarif/runs/0"},
		{logOf(run(), `{"results":[]}`), "/sarif/runs/1/tool"},
		{logOf(`{"tool":{"name":"x"}}`), "/sarif/runs/0/tool/driver"},
		{logOf(`{"tool":{"driver":{"version":"1"}}}`), "/sarif/runs/0/tool/driver/name"},
		{logOf(`{"tool":{"driver":{"name":["x"]}}}`), "/sarif/runs/0/tool/driver/name"},
		{logOf(`{"tool":{"driver":{"name":"x","rules":[{"name":"no id"}]}}}`), "/sarif/runs/0/tool/driver/rules/0/id"},
		{logOf(`{"tool":{"driver":{"name":"x","rules":[{"id":"a","deprecatedIds":["b",3]}]}}}`), "/sarif/runs/0/tool/driver/rules/0/deprecatedIds/1"},
		{logOf(`{"tool":{"driver":{"name":"x"},"extensions":[{"name":"e","rules":[{"id":"a","properties":{"tags":"secret"}}]}]}}`), "/sarif/runs/0/tool/extensions/0/rules/0/properties/tags"},
		{logOf(`{"tool":{"driver":{"name":"x"}},"results":{}}`), "/sarif/runs/0/results"},
		{logOf(run(results(7, ok), `{"ruleId":"R","locations":[]}`)), "/sarif/runs/0/results/7/message"},
		{logOf(run(`{"ruleId":"R","message":{"markdown":"x"}}`)), "/sarif/runs/0/results/0/message"},
		{logOf(run(`{"ruleId":"R","message":"x"}`)), "/sarif/runs/0/results/0/message"},
		{logOf(run(`7`)), "/sarif/runs/0/results/0"},
		{logOf(run(`{"ruleId":1,"message":{"text":"x"}}`)), "/sarif/runs/0/results/0/ruleId"},
		{logOf(run(`{"ruleId":"R","ruleIndex":1.5,"message":{"text":"x"}}`)), "/sarif/runs/0/results/0/ruleIndex"},
		{logOf(run(`{"ruleId":"R","ruleIndex":-2,"message":{"text":"x"}}`)), "/sarif/runs/0/results/0/ruleIndex"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":{}}`)), "/sarif/runs/0/results/0/locations"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":[{},{"physicalLocation":{"region":{"startLine":"3"}}}]}`)), "/sarif/runs/0/results/0/locations/1/physicalLocation/region/startLine"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":[{"physicalLocation":{"region":{"startLine":0}}}]}`)), "/sarif/runs/0/results/0/locations/0/physicalLocation/region/startLine"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":7}}}]}`)), "/sarif/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":[{"physicalLocation":{"region":{"snippet":{"text":42}}}}]}`)), "/sarif/runs/0/results/0/locations/0/physicalLocation/region/snippet/text"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"kind":"bogus"}`)), "/sarif/runs/0/results/0/kind"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"baselineState":"gone"}`)), "/sarif/runs/0/results/0/baselineState"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"suppressions":[{"kind":"inSource"},{"kind":"inSource","status":"maybe"}]}`)), "/sarif/runs/0/results/0/suppressions/1/status"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"suppressions":[{"kind":"nowhere"}]}`)), "/sarif/runs/0/results/0/suppressions/0/kind"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"properties":{"tags":["a",2]}}`)), "/sarif/runs/0/results/0/properties/tags/1"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"properties":[]}`)), "/sarif/runs/0/results/0/properties"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"partialFingerprints":{"secret/v1":1}}`)), "/sarif/runs/0/results/0/partialFingerprints/secret~1v1"},
		{logOf(`{"tool":{"driver":{"name":"t"}},"originalUriBaseIds":{"SRC":{"uri":1}}}`), "/sarif/runs/0/originalUriBaseIds/SRC/uri"},
		{logOf(run(ok, `{"message":{"text":"no rule"}}`)), "/sarif/runs/0/results/1/ruleId"},
		{logOf(run(`{"ruleId":"` + strings.Repeat("é", 257) + `","message":{"text":"x"}}`)), "/sarif/runs/0/results/0/ruleId"},
		{logOf(run(`{"ruleId":"R\u200b","message":{"text":"x"}}`)), "/sarif/runs/0/results/0/ruleId"},
		{logOf(run(`{"ruleId":"R","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"` + strings.Repeat("a/", 1025) + `"}}}]}`)), "/sarif/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"},
		{logOf(`{"tool":{"driver":{"name":"t","rules":[{"id":"CVE-2020-0001","deprecatedIds":[` + strings.Join(aliasList(21), ",") + `]}]}},"results":[{"ruleIndex":0,"message":{"text":"x"}}]}`), "/sarif/runs/0/results/0"},
	}
	for _, c := range cases {
		_, err := readLog(strings.NewReader(c.log), Options{Pointer: "/sarif"})
		var se *SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%.120s: got %v (%T), want a SchemaError", c.log, err, err)
			continue
		}
		if se.Pointer != c.pointer {
			t.Errorf("%.120s: pointer %q (%s), want %q", c.log, se.Pointer, se.Detail, c.pointer)
		}
	}
}

func aliasList(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, `"alias-`+itoa(i)+`"`)
	}
	return out
}

// The pointer prefix is the caller's: "" for a log on its own (issue 15).
func TestPointerPrefix(t *testing.T) {
	_, err := readLog(strings.NewReader(`{"version":"2.1.0","runs":[{"tool":{}}]}`), Options{})
	var se *SchemaError
	if !errors.As(err, &se) || se.Pointer != "/runs/0/tool/driver" {
		t.Errorf("got %v", err)
	}
}

// Bytes that are no JSON, no UTF-8, no gzip or no base64 are an InputError.
func TestInputErrors(t *testing.T) {
	valid := logOf(runOf(`"name":"t"`, `{"ruleId":"R","message":{"text":"x"}}`))
	corrupt := gz(t, valid)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC
	cases := map[string]func() error{
		"not JSON":        func() error { _, err := readLog(strings.NewReader(`{"version":`), Options{}); return err },
		"bad token":       func() error { _, err := readLog(strings.NewReader(`{"version" "2.1.0"}`), Options{}); return err },
		"empty":           func() error { _, err := readLog(strings.NewReader(``), Options{}); return err },
		"more JSON after": func() error { _, err := readLog(strings.NewReader(valid+`{}`), Options{}); return err },
		"not UTF-8": func() error {
			_, err := readLog(strings.NewReader(strings.Replace(valid, `"x"`, "\"\xff\"", 1)), Options{})
			return err
		},
		"cut UTF-8 at end": func() error { _, err := readLog(strings.NewReader(valid+" \xe2\x82"), Options{}); return err },
		"bad base64":       func() error { _, err := readB64("H4sI!!!!", Options{}); return err },
		"base64 not gzip": func() error {
			_, err := readB64(base64.StdEncoding.EncodeToString([]byte(valid)), Options{})
			return err
		},
		"empty base64":      func() error { _, err := readB64("", Options{}); return err },
		"truncated gzip":    func() error { _, err := readGzip(bytes.NewReader(gz(t, valid)[:40]), Options{}); return err },
		"gzip bad checksum": func() error { _, err := readGzip(bytes.NewReader(corrupt), Options{}); return err },
		"gzip then garbage": func() error {
			_, err := readGzip(bytes.NewReader(append(gz(t, valid), "junk"...)), Options{})
			return err
		},
		"too deep": func() error {
			_, err := readLog(strings.NewReader(`{"x":`+strings.Repeat("[", 200)), Options{})
			return err
		},
		"member string not JSON": func() error {
			_, err := ReadBody([]byte(`{"sarif":"abc`), Options{}, (&Report{}).Add)
			return err
		},
	}
	for name, f := range cases {
		var ie *InputError
		if err := f(); !errors.As(err, &ie) {
			t.Errorf("%s: got %v (%T), want an InputError", name, err, err)
		}
	}
}

// A log with a UTF-8 byte order mark, split anywhere, reads as without it.
func TestUTF8AcrossReads(t *testing.T) {
	log := "\xef\xbb\xbf" + logOf(runOf(`"name":"gitleaks"`, secretRes("r", "ü/ä.env", 1, "välüe-€-𝄞-secret", "")))
	want := sha("välüe-€-𝄞-secret")
	for size := 1; size < 8; size++ {
		rep, err := readLog(&chunked{s: log, n: size}, Options{})
		if err != nil {
			t.Fatalf("reads of %d bytes: %v", size, err)
		}
		if flat(rep)[0].Name != want || flat(rep)[0].Path != "ü/ä.env" {
			t.Errorf("reads of %d bytes: %+v", size, flat(rep)[0])
		}
	}
}

type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

// ReadBody takes the sarif member as an object or as base64 of gzip.
func TestReadBodyForms(t *testing.T) {
	log := logOf(runOf(`"name":"Bandit","version":"1.9.4"`, res("B602", "a.py", 3, "")))
	for _, raw := range []string{log, " \n" + log, quote(b64gz(t, log))} {
		rep := &Report{}
		body, err := ReadBody([]byte(`{"a":1,"sarif":`+raw+`,"b":[true]}`), Options{}, rep.Add)
		if err != nil || rep.Recorded != 1 || flat(rep)[0].Name != "B602" || body.Counts != rep.Counts || !body.Log ||
			string(body.Members["a"]) != "1" || string(body.Members["b"]) != "[true]" || len(body.Members) != 2 {
			t.Errorf("%.40s: %+v %+v %v", raw, rep, body, err)
		}
	}
	for _, raw := range []string{`7`, `[]`, `true`} {
		body, err := ReadBody([]byte(`{"sarif":`+raw+`,"after":1}`), Options{}, (&Report{}).Add)
		var se *SchemaError
		if !errors.As(err, &se) || se.Pointer != "/sarif" || string(body.Members["after"]) != "1" || !body.Log {
			t.Errorf("%q: got %v, want a SchemaError at /sarif and the members after it", raw, err)
		}
	}
	body, err := ReadBody([]byte(`{"sarif":null}`), Options{}, (&Report{}).Add)
	if err != nil || body.Log || string(body.Members["sarif"]) != "null" {
		t.Errorf("null: %+v %v", body, err)
	}
	body, err = ReadBody([]byte(`{"x":1}`), Options{}, (&Report{}).Add)
	if err != nil || body.Log || len(body.Members) != 1 {
		t.Errorf("no log: %+v %v", body, err)
	}
}

// gzip and base64 of gzip read like the log itself, line breaks in the
// base64 too.
func TestGzipForms(t *testing.T) {
	log := logOf(runOf(`"name":"gitleaks"`, secretRes("r", "a", 1, "s3cr3t-v4lue", "")))
	b64 := b64gz(t, log)
	wrapped := ""
	for i := 0; i < len(b64); i += 76 {
		wrapped += b64[i:min(i+76, len(b64))] + "\r\n"
	}
	for name, f := range map[string]func() (*Report, error){
		"gzip":           func() (*Report, error) { return readGzip(bytes.NewReader(gz(t, log)), Options{}) },
		"base64":         func() (*Report, error) { return readB64(b64, Options{}) },
		"wrapped base64": func() (*Report, error) { return readB64(wrapped, Options{}) },
	} {
		rep, err := f()
		if err != nil || rep.Recorded != 1 || flat(rep)[0].Name != sha("s3cr3t-v4lue") {
			t.Errorf("%s: %+v %v", name, rep, err)
		}
	}
}

// The first problem of a log's schema is its answer (422), its runs not
// mapped; but the rest of the log is still read, so that bytes that are no
// JSON after it answer 400, as they would in any body.
func TestSchemaErrorThenRest(t *testing.T) {
	handed := 0
	_, err := Read(strings.NewReader(`{"version":"2.0.0","runs":[{"tool":{}},{"tool":{"driver":{"name":"x"}}}]}`), Options{},
		func(*Run) error { handed++; return nil })
	var se *SchemaError
	if !errors.As(err, &se) || se.Pointer != "/version" || handed != 0 {
		t.Errorf("got %v, %d runs handed on", err, handed)
	}
	_, err = Read(strings.NewReader(`{"version":"2.0.0","runs":[`+strings.Repeat("!", 1<<10)), Options{}, (&Report{}).Add)
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Errorf("got %v, want an InputError", err)
	}
}
