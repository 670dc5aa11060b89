package linehash

import (
	"fmt"
	"os"
	"path/filepath"
)

// Checkout is the directory the scanned files are read from: the
// repository's working tree, as the scanners saw it. Nothing outside it is
// read, through ".." or a symbolic link.
type Checkout struct {
	root   *os.Root
	dir    string   // as given, for messages
	roots  []string // its absolute path, and that path with symbolic links resolved, slash-separated
	maxLog int      // MaxLog but in tests
}

// Open opens the checkout at dir.
func Open(dir string) (*Checkout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("the checkout %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("the checkout: %w", err)
	}
	c := &Checkout{root: root, dir: dir, roots: []string{filepath.ToSlash(abs)}, maxLog: MaxLog}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		c.roots = append(c.roots, filepath.ToSlash(real))
	}
	return c, nil
}

// Close releases the checkout's directory.
func (c *Checkout) Close() error {
	return c.root.Close()
}
