// Command scangate-generate writes the files that follow from the
// operations table (internal/ops): every functions/<op>/main.go and the
// function blocks of template.yaml. Run it from the repository's root
// (make generate) after changing the table; a test fails while a
// committed file differs from what it writes.
//
// With -adopt it first moves into the table what template.yaml says by
// hand of a function of the table (a resource outside the generated
// blocks, as operations were added before): make generate runs it so,
// then again without -adopt, since the table it generates from is the
// one compiled in.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/scangate/scangate/internal/ops"
)

func main() {
	adopt := flag.Bool("adopt", false, "move the hand-written template resources of the table's functions into the table, and stop")
	flag.Parse()
	if err := run(*adopt); err != nil {
		fmt.Fprintln(os.Stderr, "scangate-generate:", err)
		os.Exit(1)
	}
}

func run(adopt bool) error {
	if adopt {
		return adoptAll()
	}
	files, err := ops.Generate(os.ReadFile)
	if err != nil {
		return err
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		if old, err := os.ReadFile(path); err == nil && string(old) == string(files[path]) {
			continue
		}
		if err := write(path, files[path]); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}

// adoptAll moves the hand-written resources into the table's source.
func adoptAll() error {
	src, err := os.ReadFile(ops.TableSource)
	if err != nil {
		return err
	}
	tpl, err := os.ReadFile("template.yaml")
	if err != nil {
		return err
	}
	src, tpl, ids, err := ops.Adopt(ops.Operations(), src, tpl)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := write(ops.TableSource, src); err != nil {
		return err
	}
	if err := write("template.yaml", tpl); err != nil {
		return err
	}
	fmt.Printf("moved into %s, out of template.yaml: %v\n", ops.TableSource, ids)
	return nil
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
