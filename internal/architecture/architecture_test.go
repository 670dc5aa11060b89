// Package architecture holds TestArchitecture: docs/ARCHITECTURE.md's
// table of packages and the imports each may have, held against go list.
package architecture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const repo = "../.."

// rule is a line of the table: a package (or, ending in /*, every package
// under a folder) and the packages of the module it may import.
type rule struct {
	pkg     string
	allowed []string
	line    int
}

// pkg is a package of the module as go list reports it.
type pkg struct {
	ImportPath string
	Imports    []string
	Error      *struct{ Err string }
}

var cell = regexp.MustCompile("`([^`]+)`")

// readRules reads the rows of the table of packages: | `pkg` | holds | `a`, `b` |.
func readRules(r io.Reader) ([]rule, error) {
	var rules []rule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cols := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cols) != 3 {
			return nil, fmt.Errorf("line %d: %d columns, want 3 (package, holds, may import)", n, len(cols))
		}
		name := cell.FindStringSubmatch(cols[0])
		if name == nil {
			return nil, fmt.Errorf("line %d: no package", n)
		}
		ru := rule{pkg: name[1], line: n}
		for _, m := range cell.FindAllStringSubmatch(cols[2], -1) {
			ru.allowed = append(ru.allowed, m[1])
		}
		rules = append(rules, ru)
	}
	return rules, sc.Err()
}

// matches reports whether pattern (a path, or a folder/*) names p.
func matches(pattern, p string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(p, dir+"/")
	}
	return pattern == p
}

// check is every breach of rules by pkgs (their paths relative to the
// module mod).
func check(rules []rule, pkgs []pkg, mod string) []string {
	var errs []string
	used := make([]bool, len(rules))
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		var r *rule
		for i := range rules {
			if matches(rules[i].pkg, rel) {
				if r != nil {
					errs = append(errs, fmt.Sprintf("%s has two lines in docs/ARCHITECTURE.md (%d and %d)", rel, r.line, rules[i].line))
				}
				r, used[i] = &rules[i], true
			}
		}
		if r == nil {
			errs = append(errs, fmt.Sprintf("%s has no line in docs/ARCHITECTURE.md", rel))
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, mod+"/")
			if !slices.ContainsFunc(r.allowed, func(a string) bool { return matches(a, dep) }) {
				errs = append(errs, fmt.Sprintf("%s imports %s, which its line (docs/ARCHITECTURE.md:%d) does not allow", rel, dep, r.line))
			}
		}
	}
	for i, r := range rules {
		if !used[i] {
			errs = append(errs, fmt.Sprintf("docs/ARCHITECTURE.md:%d names %s, which is no package", r.line, r.pkg))
		}
	}
	return errs
}

// list is every package of the module, by go list.
func list(t *testing.T) ([]pkg, string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	modOut, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return pkgs, strings.TrimSpace(string(modOut))
}

// TestArchitecture holds every package of the module against its line of
// docs/ARCHITECTURE.md: a package without a line, a line without a
// package, or an import its line does not name fails.
func TestArchitecture(t *testing.T) {
	f, err := os.Open(path.Join(repo, "docs/ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rules, err := readRules(f)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, mod := list(t)
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, e := range check(rules, pkgs, mod) {
		t.Error(e)
	}
}

// TestArchitectureCheck: the check refuses a package added without a
// line, an import its line does not name, and a line naming no package;
// it takes what the table allows.
func TestArchitectureCheck(t *testing.T) {
	const mod = "example.com/m"
	doc := strings.Join([]string{
		"| Package | Holds | May import |",
		"|---|---|---|",
		"| `internal/domain` | the domain | — |",
		"| `internal/api` | HTTP | `internal/domain`, `internal/events/*` |",
		"| `internal/events/*` | events | `internal/domain` |",
		"| `internal/gone` | removed | — |",
	}, "\n")
	rules, err := readRules(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := []pkg{
		{ImportPath: mod + "/internal/domain", Imports: []string{"fmt"}},
		{ImportPath: mod + "/internal/api", Imports: []string{mod + "/internal/domain", mod + "/internal/events/bus", "net/http"}},
		{ImportPath: mod + "/internal/events/bus", Imports: []string{mod + "/internal/domain", mod + "/internal/api"}},
		{ImportPath: mod + "/internal/added"},
	}
	got := check(rules, pkgs, mod)
	want := []string{
		"internal/events/bus imports internal/api, which its line (docs/ARCHITECTURE.md:5) does not allow",
		"internal/added has no line in docs/ARCHITECTURE.md",
		"docs/ARCHITECTURE.md:6 names internal/gone, which is no package",
	}
	if !slices.Equal(got, want) {
		t.Errorf("check found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
