package gateway

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOpenAPIRoutesMatchTemplate keeps docs/openapi.yaml, template.yaml and
// the local server's routing to one set of routes.
func TestOpenAPIRoutesMatchTemplate(t *testing.T) {
	b, err := os.ReadFile("../../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q; want 3.1", doc.OpenAPI)
	}
	var fromDoc []string
	for p, ops := range doc.Paths {
		for m := range ops {
			fromDoc = append(fromDoc, strings.ToUpper(m)+" "+p)
		}
	}
	tpl, err := ReadTemplate("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fromTemplate []string
	for _, r := range tpl.Routes {
		fromTemplate = append(fromTemplate, r.Method+" "+r.Path)
		// The local server routes it (with a concrete id for a parameter).
		s := &Server{t: tpl}
		path := strings.NewReplacer("{user_id}", "1", "{pr_scan_id}", "1", "{whitelist_id}", "1", "{pr_id}", "1").Replace(r.Path)
		if got, _, ok := s.match(r.Method, path); !ok || got.Path != r.Path {
			t.Errorf("the local server does not route %s %s", r.Method, path)
		}
	}
	slices.Sort(fromDoc)
	slices.Sort(fromTemplate)
	if !slices.Equal(fromDoc, fromTemplate) {
		t.Fatalf("routes differ:\nopenapi.yaml  %v\ntemplate.yaml %v", fromDoc, fromTemplate)
	}
}

// TestCollections: exactly the paths docs/API.md names take a trailing
// slash, derived from the template's routes.
func TestCollections(t *testing.T) {
	tpl, err := ReadTemplate("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range tpl.Collections {
		got = append(got, p)
	}
	slices.Sort(got)
	if want := []string{"/api/pr/scan", "/api/users", "/api/whitelist"}; !slices.Equal(got, want) {
		t.Fatalf("collections %v; want %v", got, want)
	}
	s := &Server{t: tpl}
	for _, c := range []struct {
		method, path string
		ok           bool
	}{
		{"POST", "/api/users/", true}, {"POST", "/api/pr/scan/", true}, {"POST", "/api/whitelist/", true},
		{"POST", "/api/auth/token/", false}, {"GET", "/api/pr/scan/1/", false}, {"PUT", "/api/users/1/", false},
	} {
		if _, _, ok := s.match(c.method, c.path); ok != c.ok {
			t.Errorf("%s %s routed: %v; want %v", c.method, c.path, ok, c.ok)
		}
	}
}
