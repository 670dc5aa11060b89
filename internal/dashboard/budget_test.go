package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"testing"

	"github.com/scangate/scangate/internal/dashboard"
)

// budget is the most the first load may fetch, gzipped.
const budget = 150 << 10

var (
	// htmlRefs are the files index.html loads: its scripts, styles, icons.
	htmlRefs = regexp.MustCompile(`(?:src|href)="([a-z0-9_./-]+\.(?:js|css|svg))"`)
	// jsImports are the modules a module imports statically.
	jsImports = regexp.MustCompile(`(?m)^(?:import|export)\s[^;'"]*?from\s+'(\.{1,2}/[^']+)'|^import\s+'(\.{1,2}/[^']+)'`)
)

// firstLoad lists what a browser fetches to show the first page: "/"
// (index.html), what it references, the modules app.js imports, and
// config.json, by walking the files as the browser does.
func firstLoad(t testing.TB) []string {
	t.Helper()
	files := dashboard.Files()
	seen := map[string]bool{"index.html": true, dashboard.ConfigName: true}
	var queue []string
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range htmlRefs.FindAllSubmatch(index, -1) {
		queue = append(queue, string(m[1]))
	}
	for len(queue) > 0 {
		name := path.Clean(queue[0])
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		if path.Ext(name) != ".js" {
			continue
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range jsImports.FindAllSubmatch(b, -1) {
			queue = append(queue, path.Join(path.Dir(name), string(m[1])+string(m[2])))
		}
	}
	var out []string
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// body is a file of the first load as the deployed site serves it.
func body(t testing.TB, name string) []byte {
	if name == dashboard.ConfigName {
		return dashboard.Config("https://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod/api")
	}
	b, err := fs.ReadFile(dashboard.Files(), name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// TestFirstLoadBudget: what the first load fetches, gzipped file by file
// (as CloudFront compresses them), is under 150 KiB. It logs each file's
// size (docs/BENCHMARKS.md).
func TestFirstLoadBudget(t *testing.T) {
	load := firstLoad(t)
	total, raw := 0, 0
	for _, name := range load {
		b := body(t, name)
		n := gzipped(t, b)
		total += n
		raw += len(b)
		t.Logf("%-20s %6d B, %6d B gzipped", name, len(b), n)
	}
	t.Logf("first load: %d files, %d B (%.1f KiB), %d B gzipped (%.1f KiB); budget %d KiB", len(load), raw, float64(raw)/1024, total, float64(total)/1024, budget>>10)
	if total >= budget {
		t.Errorf("the first load is %d B gzipped; the budget is %d B", total, budget)
	}
	// Every page's module is in it (app.js imports them all), and every
	// embedded file is fetched by it: no file ships that nothing loads.
	for _, name := range dashboard.Names() {
		if !slices.Contains(load, name) {
			t.Errorf("%s is embedded but the first load does not fetch it", name)
		}
	}
}
