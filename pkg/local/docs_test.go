package local_test

import (
	"io/fs"
	"os"
	"path/filepath"
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
