// Command scangate-generate writes the files that follow from the
// operations table (internal/ops): every functions/<op>/main.go and the
// function blocks of template.yaml. Run it from the repository's root
// (make generate) after changing the table; a test fails while a
// committed file differs from what it writes.
package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/scangate/scangate/internal/ops"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scangate-generate:", err)
		os.Exit(1)
	}
}

func run() error {
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

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
