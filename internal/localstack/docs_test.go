package localstack_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStandAlone: nothing in the repository (README, docs/, code and its
// comments, tests, CI) sends a reader to documents a clone does not hold:
// the contract the project was built from lives outside it, and docs/API.md
// says what it serves in the project's own words.
func TestDocsStandAlone(t *testing.T) {
	t.Parallel()
	// Spelled in pieces, so that this file does not name them.
	outside := []string{"../" + "shared", "/work/" + "shared", "DESIGN" + ".md", "code-scanning-" + "service.md"}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "../.." && strings.HasPrefix(name, ".") && name != ".ci" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) {
					t.Errorf("%s:%d names %s, which a clone does not have: %s", strings.TrimPrefix(path, "../../"), i+1, o, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadmeGoVersion: the README names the Go that go.mod needs, exactly
// (a Go older than go.mod's line cannot build it without fetching a
// toolchain).
func TestReadmeGoVersion(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(\.\d+)?)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range regexp.MustCompile(`Go (\d+\.\d+(\.\d+)?)\b`).FindAllSubmatch(readme, -1) {
		if string(v[1]) != string(m[1]) {
			t.Errorf("the README says Go %s; go.mod needs %s", v[1], m[1])
		}
	}
	if !strings.Contains(string(readme), "Go "+string(m[1])+" or later") {
		t.Errorf("the README does not say Go %s or later", m[1])
	}
}
