package lambdarun_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initBudget is the most a package of the service may allocate in its
// package initialisation, which every cold start of every function that
// links it pays: a few small variables, no table, regular expression or
// template built at start (those are built on first use).
const initBudget = 2048

// TestServicePackagesInitLittle (issue 33, item 7): this test binary links
// every package of the service's functions (through pkg/ops); started
// again with GODEBUG=inittrace=1, each of the service's packages allocates
// at most initBudget bytes in its initialisation. Allocation, not time, so
// that the machine's load cannot make it pass or fail.
func TestServicePackagesInitLittle(t *testing.T) {
	if os.Getenv("SCANGATE_INITTRACE_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServicePackagesInitLittle$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "SCANGATE_INITTRACE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// init github.com/x/y @0.5 ms, 0.010 ms clock, 512 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/scangate/scangate/pkg/") {
			continue
		}
		seen++
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		if bytes > initBudget {
			t.Errorf("%s allocates %d bytes (%s allocs) at package initialisation; the budget is %d: build it on first use", f[1], bytes, f[9], initBudget)
		}
	}
	if seen < 10 {
		t.Fatalf("inittrace named %d of the service's packages; want every one this binary links:\n%s", seen, out)
	}
}
