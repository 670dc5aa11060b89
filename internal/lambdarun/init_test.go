package lambdarun_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/ops"
)

// initBudget is the most a package beyond the floor may allocate in its
// package initialisation, which every cold start of every function that
// links it pays: a few small variables, no table, regular expression or
// template built at start (those are built on first use).
const initBudget = 2048

// heavyInit are the packages beyond the floor allowed over initBudget:
// the SDK's own, linked only where the client is used (the link test),
// and why.
var heavyInit = map[string]string{
	"github.com/aws/aws-sdk-go-v2/service/s3/internal/endpoints": "the S3 client's endpoint table (the upload functions, the dashboard's publisher)",
	"encoding/xml": "the S3 client's XML",
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream": "the S3 client's event streams",
	"github.com/aws/aws-sdk-go-v2/internal/v4a":             "the S3 client's SigV4a",
	"github.com/aws/aws-sdk-go-v2/internal/v4a/internal/v4": "the S3 client's SigV4a",
	"golang.org/x/text/cases":                               "e-mail and token-name folding (create-user, update-user, create-token)",
	"golang.org/x/text/internal/language":                   "e-mail and token-name folding",
	"github.com/google/go-github/v75/github":                "the deliverer's commit statuses",
	"github.com/google/go-github/v88/github":                "the deliverer's GitHub App tokens (ghinstallation's go-github)",
}

// pkgInit is one package's initialisation in GODEBUG=inittrace=1.
type pkgInit struct {
	ms            float64
	bytes, allocs int
}

// initTrace is the package initialisation of this test binary, which
// links every package of the functions (through internal/ops, which builds
// them all and generates their mains): started again with
// GODEBUG=inittrace=1.
func initTrace(t *testing.T) map[string]pkgInit {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	trace := map[string]pkgInit{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// init github.com/x/y @0.5 ms, 0.010 ms clock, 512 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		ms, err1 := strconv.ParseFloat(f[4], 64)
		b, err2 := strconv.Atoi(f[7])
		a, err3 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		trace[f[1]] = pkgInit{ms: ms, bytes: b, allocs: a}
	}
	return trace
}

// TestServicePackagesInitLittle (issue 33, item 7): each of the service's
// packages allocates at most initBudget bytes in its initialisation.
// Allocation, not time, so that the machine's load cannot make it pass or
// fail.
func TestServicePackagesInitLittle(t *testing.T) {
	seen := 0
	for pkg, in := range initTrace(t) {
		// The service's packages, not the tests' own.
		if !strings.HasPrefix(pkg, "github.com/scangate/scangate/") || strings.HasSuffix(pkg, "_test") ||
			strings.Contains(pkg, "/internal/lambdarun") || strings.Contains(pkg, "/internal/ddbtest") {
			continue
		}
		seen++
		if in.bytes > initBudget {
			t.Errorf("%s allocates %d bytes (%d allocs) at package initialisation; the budget is %d: build it on first use", pkg, in.bytes, in.allocs, initBudget)
		}
	}
	if seen < 5 {
		t.Fatalf("inittrace named %d of the service's packages; want every one this binary links that initialises anything", seen)
	}
}

// TestInitBeyondTheFloor (issue 33, item 7): what each function
// initialises beyond the floor (aws-lambda-go and the DynamoDB client):
// the packages it links that the floor does not, with what their
// initialisation allocates (logged, for docs/BENCHMARKS.md; go test -v).
// None of them allocates over initBudget but the S3 client's (heavyInit),
// and those only in the functions that use a bucket.
func TestInitBeyondTheFloor(t *testing.T) {
	trace := initTrace(t)
	deps := lambdaDeps(t, "./functions/...", "./internal/lambdarun/testdata/floor")
	floor := deps["floor"]
	if len(floor) == 0 {
		t.Fatal("go list did not list the floor")
	}
	for _, op := range ops.Operations() {
		var beyond []string
		total := pkgInit{}
		for _, p := range deps[op.Name] {
			in, ok := trace[p]
			if slices.Contains(floor, p) || !ok || in.bytes == 0 {
				continue
			}
			total.bytes, total.allocs = total.bytes+in.bytes, total.allocs+in.allocs
			beyond = append(beyond, fmt.Sprintf("%s %d B", strings.TrimPrefix(p, "github.com/"), in.bytes))
			if _, heavy := heavyInit[p]; in.bytes > initBudget && !heavy {
				t.Errorf("%s links %s, which allocates %d bytes (%d allocs) at initialisation; the budget is %d", op.Name, p, in.bytes, in.allocs, initBudget)
			}
		}
		t.Logf("%s: %d B in %d allocs beyond the floor: %s", op.Name, total.bytes, total.allocs, strings.Join(beyond, ", "))
	}
}
