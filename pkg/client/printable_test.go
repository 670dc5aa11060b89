package client_test

import (
	"encoding/json"
	"testing"

	"github.com/scangate/scangate/pkg/client"
)

// Printable escapes what would act on a terminal or a CI log, and leaves
// every other character, accents and emoji included, as it is.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"config/prod.env":          "config/prod.env",
		"café ✓ 日本 🔑":              "café ✓ 日本 🔑",
		"a\x1b[31mb":               `a\x1b[31mb`,
		"line\r\n::add-mask::x":    `line\r\n::add-mask::x`,
		"tab\there\x00\x07\x7f":    `tab\there\x00\x07\x7f`,
		"c1\u0085\u009b2J":         `c1\u0085\u009b2J`,
		"bidi\u202egnp.exe\u2066x": `bidi\u202egnp.exe\u2066x`,
		"sep\u2028\u2029":          `sep\u2028\u2029`,
		"bad\xff\xfeutf8":          `bad\xff\xfeutf8`,
	} {
		if got := client.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q; want %q", in, got, want)
		}
	}
}

// PrintableJSON keeps the document the same for a program: it decodes to
// the same value, and holds none of the characters that act raw.
func TestPrintableJSON(t *testing.T) {
	doc := []byte(`{"path":"a` + "\u009b\u202e\u2028\x7f" + `b","n":1,"ok":"é"}`)
	got := client.PrintableJSON(doc)
	if string(got) != `{"path":"a\u009b\u202e\u2028\u007fb","n":1,"ok":"é"}` {
		t.Errorf("got %s", got)
	}
	var a, b any
	if json.Unmarshal(doc, &a) != nil || json.Unmarshal(got, &b) != nil {
		t.Fatal("not JSON")
	}
	if ja, _ := json.Marshal(a); string(ja) != string(mustMarshal(t, b)) {
		t.Errorf("the values differ: %v %v", a, b)
	}
	plain := []byte(`{"a":"b"}`)
	if got := client.PrintableJSON(plain); string(got) != string(plain) {
		t.Errorf("a plain document changed: %s", got)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
