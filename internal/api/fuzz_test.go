package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// FuzzBody feeds arbitrary bytes and content types through the body checks
// and the schemas: nothing panics, every refusal is a 4xx with a pointer
// for each schema problem, and anything accepted is a valid JSON object.
func FuzzBody(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"username":"a"}`, `[]`, `"x"`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		`{"scan_type":"SECRET","vc_type":"g","vc_id":1,"vc_name":"v","repo_id":1,"repo_name":"o/r","webhook_id":1,"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"},"findings":[{"name":"x","line":3}]}`,
		`{"type":"SECRET","name":"x","repos":[1,2],"vcs":null,"comment":null}`, `{"findings":[1,{"name":null}]}`, `{"pr":[]}`, `{"other_details":{"a":[{}]}}`,
		`{"a":1e400}`, `{"a":-0}`, `{"\u0000":1}`, ` {} `, `{}x`,
	} {
		f.Add([]byte(s), "application/json")
	}
	f.Add([]byte(`{}`), "text/plain")
	f.Add([]byte(`{}`), "application/json; charset=utf-8")
	f.Fuzz(func(t *testing.T, raw []byte, ct string) {
		req := events.APIGatewayProxyRequest{Body: string(raw), Headers: map[string]string{"Content-Type": ct}}
		m, err := body(req)
		if err != nil {
			resp := problemResponse(err)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Fatalf("body refused with %d", resp.StatusCode)
			}
			return
		}
		if !utf8.Valid(raw) || !json.Valid(raw) {
			t.Fatalf("accepted a body that is not valid UTF-8 JSON: %q", raw)
		}
		for _, read := range []func(members) error{
			func(m members) error { _, err := readScan(m); return err },
			func(m members) error { _, err := readAllowlistChange(m, true, time.Now()); return err },
			func(m members) error { _, err := readAllowlistChange(m, false, time.Now()); return err },
		} {
			err := read(m)
			if err == nil {
				continue
			}
			de, ok := err.(*scangate.Error)
			if !ok || de.Kind != scangate.KindInvalid || len(de.Fields) == 0 {
				t.Fatalf("schema refusal %v is not a 422 with pointers", err)
			}
			for _, fe := range de.Fields {
				if !strings.HasPrefix(fe.Pointer, "/") || fe.Detail == "" {
					t.Fatalf("bad problem %+v", fe)
				}
			}
		}
	})
}

// FuzzPathID: a path id is accepted exactly when it is [1-9][0-9]* within int64.
func FuzzPathID(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "01", "+1", "9223372036854775807", "9223372036854775808", "1e3", " 1", "abc", "", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := PathID(events.APIGatewayProxyRequest{PathParameters: map[string]string{"id": s}}, "id")
		canonical := len(s) > 0 && s[0] >= '1' && s[0] <= '9' && strings.Trim(s, "0123456789") == ""
		if err == nil {
			if !canonical || id < 1 {
				t.Fatalf("accepted %q as %d", s, id)
			}
			return
		}
		if canonical && len(s) < 19 {
			t.Fatalf("refused %q", s)
		}
		if scangate.KindOf(err) != scangate.KindInvalid {
			t.Fatalf("refused %q with %v", s, err)
		}
	})
}
