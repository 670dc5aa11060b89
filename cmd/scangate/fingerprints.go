package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/scangate/scangate/internal/linehash"
)

// fingerprintFlags are upload's flags for the hashes it adds to results.
type fingerprintFlags struct {
	checkout *string
	off      *bool
}

func (f *fingerprintFlags) register(fs *flag.FlagSet) {
	f.checkout = fs.String("checkout", ".", "the directory the scanners scanned: results' primaryLocationLineHash is computed from its files")
	f.off = fs.Bool("no-fingerprints", false, "send the logs as they are, without computing a primaryLocationLineHash for results that lack one")
}

// open opens the checkout, nil with --no-fingerprints.
func (f fingerprintFlags) open() (*linehash.Checkout, error) {
	if *f.off {
		return nil, nil
	}
	return linehash.Open(*f.checkout)
}

// readLog reads a log to send and gzips it, after giving its results the
// primaryLocationLineHash GitHub's upload action computes from the
// checkout, unless there is none (--no-fingerprints); it says on standard
// error which results it could not hash.
func (a *app) readLog(file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if a.checkout != nil {
		var sum linehash.Summary
		if raw, sum, err = a.checkout.Add(raw); err != nil {
			return nil, fmt.Errorf("adding fingerprints: %w", err)
		}
		if s := sum.String(); s != "" {
			fmt.Fprintf(a.stderr, "%s: %s\n", file, printable(s)) // it names a path of the log
		}
	}
	return gzipLog(raw)
}

func (a *app) closeCheckout() {
	if a.checkout != nil {
		_ = a.checkout.Close()
		a.checkout = nil
	}
}
