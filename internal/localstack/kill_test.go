package localstack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// freezer is a proxy in front of DynamoDB that lets a process's first
// transactions through and then freezes it: the transaction after them is
// committed but never answered, and every later request waits, never
// sent. A process frozen so has committed part of its work and is killed
// in the middle of the rest, at a point that depends on no timing.
type freezer struct {
	proxy  *httputil.ReverseProxy
	after  int64 // transactions let through
	txs    atomic.Int64
	frozen chan struct{} // closed once frozen
	once   sync.Once
	thaw   chan struct{} // closed to let the held requests go (unanswered)
}

func (f *freezer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-f.frozen:
		<-f.thaw
		http.Error(w, "frozen", http.StatusBadGateway)
		return
	default:
	}
	if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.TransactWriteItems" && f.txs.Add(1) > f.after {
		f.proxy.ServeHTTP(discard{}, r) // committed, never answered
		f.once.Do(func() { close(f.frozen) })
		<-f.thaw
		http.Error(w, "frozen", http.StatusBadGateway)
		return
	}
	f.proxy.ServeHTTP(w, r)
}

// discard is a response writer that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// scangateLocal runs cmd/scangate-local (built into bin) on the table with
// the environment env, and returns the base URL of its API once it
// listens.
func scangateLocal(t *testing.T, bin string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir() // its .build/ there
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if m := regexp.MustCompile(`listening on (http://\S+/api)`).FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return cmd, m[1]
		}
	}
	t.Fatalf("scangate-local exited before listening: %v", lines.Err())
	return nil, ""
}

// TestKilledMidReevaluation kills -9 the process running a large
// re-evaluation in the middle of it (cmd/scangate-local, its steps
// dispatched to the local work queue, on DynamoDB Local), starts it again,
// and sends nothing again: the scheduled function finds the work's lease
// run out and dispatches its steps not done, and check then reports no
// drift, the counts of the change exact. DynamoDB Local only (the test
// runs two processes on one table, at the size of a change that fans
// out); make test-dynamodb-local runs it.
func TestKilledMidReevaluation(t *testing.T) {
	endpoint := os.Getenv("TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		t.Skip("a process kill on DynamoDB Local: make test-dynamodb-local")
	}
	const scans, per = 320, 50 // 16,000 findings: past the 10,000 of a change that answers when done
	ctx := context.Background()
	began := time.Now()
	bin := filepath.Join(t.TempDir(), "scangate-local")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/scangate-local").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built in %v", time.Since(began))
	table := fmt.Sprintf("kill-%d", time.Now().UnixNano())
	db, err := store.NewClient(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	st := store.New(db, table)
	nss := ddbtest.GroupScans(scans, per, "CVE-2021-44228")
	for start := 0; start < scans; start += 100 {
		if _, err := st.BulkLoad(ctx, nss[start:min(start+100, scans)], scangate.Who{RequestID: "kill-test"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("loaded %d findings at %v", scans*per, time.Since(began))
	target, _ := url.Parse(endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // the killed process's requests
	fr := &freezer{proxy: rp, after: 40, frozen: make(chan struct{}), thaw: make(chan struct{})}
	proxy := &http.Server{Handler: fr, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = proxy.Serve(ln) }()
	t.Cleanup(func() { close(fr.thaw); _ = proxy.Close() })
	env := []string{"TABLE_NAME=" + table, "SCANGATE_ADDR=127.0.0.1:0", "SCANGATE_SEED=0", "SCANGATE_ADMIN_PASSWORD=kill-test-password",
		"SCANGATE_TEMPLATE=" + abs(t, "../../template.yaml"), "WORK_LEASE_SECONDS=3", "SCANGATE_SCHEDULE_EVERY=1s", "LOG_LEVEL=ERROR"}

	first, api := scangateLocal(t, bin, append(env, "DYNAMODB_ENDPOINT=http://"+ln.Addr().String())...)
	admin := loginToken(t, api, "admin", "kill-test-password")
	resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"VULNERABILITY","name":"CVE-2021-44228","global_":true,"reason":"accepted_risk"}`)
	var accepted struct {
		Reevaluation struct {
			ID       int64 `json:"id"`
			Findings int64 `json:"findings"`
		} `json:"reevaluation"`
	}
	if err := json.Unmarshal([]byte(body), &accepted); err != nil || resp.StatusCode != 202 || accepted.Reevaluation.Findings != scans*per {
		t.Fatalf("the change: %d %s", resp.StatusCode, body)
	}
	<-fr.frozen
	t.Logf("frozen at %v", time.Since(began))
	if err := first.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = first.Wait()

	// Midway: the work runs, part of the findings judged by the new rule
	// (each transaction committed with its scan's counts), part not.
	it, err := st.WorkItem(ctx, accepted.Reevaluation.ID)
	if err != nil || it.Status != work.Running {
		t.Fatalf("the work after the kill: %+v %v", it, err)
	}
	if left := unsuppressed(t, st, scans); left == 0 || left == scans*per {
		t.Fatalf("%d of %d findings unsuppressed after the kill: not midway", left, scans*per)
	}
	if rep, err := st.Check(ctx); err != nil || len(rep.Drift) > 0 || len(rep.Running) != 1 {
		t.Fatalf("check after the kill: drift %v, running %v, %v", rep.Drift, rep.Running, err)
	}

	// Started again on the table itself; nothing is sent again.
	_, api = scangateLocal(t, bin, append(env, "DYNAMODB_ENDPOINT="+endpoint)...)
	deadline := time.Now().Add(3 * time.Minute) // a bound on a stuck test, not a measure
	for {
		it, err := st.WorkItem(ctx, accepted.Reevaluation.ID)
		if err != nil {
			t.Fatal(err)
		}
		if it.Status == work.Complete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the work is not complete: %+v", it)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("complete at %v", time.Since(began))
	rep, err := st.Check(ctx)
	if err != nil || len(rep.Drift) > 0 || len(rep.Running) > 0 || len(rep.Pending) > 0 {
		t.Fatalf("check: drift %v, running %v, pending %d, %v", rep.Drift[:min(5, len(rep.Drift))], rep.Running, len(rep.Pending), err)
	}
	if left := unsuppressed(t, st, scans); left != 0 {
		t.Errorf("%d findings unsuppressed; the allowlist covers them all", left)
	}
	// Every PR's gate changed once by the change (its newest scan's 50
	// findings are one unit; check verifies that the sequences are one
	// run, each once): its pr.gate_changed written once, whether its step
	// ran before the kill, after it, or both.
	byPR := ddbtest.GateChanges(t, db, table)
	for id := int64(1); id <= scans/10; id++ {
		if gs := byPR[id]; len(gs) != 2 || gs[1].Cause != scangate.CauseAllowlist || gs[1].Blocked {
			t.Errorf("PR %d's gate changes %+v; want its first, then one of cause allowlist", id, gs)
		}
	}
	admin = loginToken(t, api, "admin", "kill-test-password")
	_, body = do(t, "GET", fmt.Sprintf("%s/reevaluations/%d", api, accepted.Reevaluation.ID), admin, "")
	var r struct {
		Status          string `json:"status"`
		Total           int64  `json:"findings_total"`
		Done            int64  `json:"findings_done"`
		Vulnerabilities int64  `json:"vulnerabilities_updated"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "complete" || r.Total != scans*per || r.Done != scans*per || r.Vulnerabilities != scans*per {
		t.Errorf("the re-evaluation: %s", body)
	}
}

// unsuppressed sums the vulnerability counts of scans 1..n.
func unsuppressed(t *testing.T, st *store.Store, n int) int64 {
	t.Helper()
	var sum int64
	for id := int64(1); id <= int64(n); id++ {
		sc, _, err := st.Scan(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		sum += sc.VulnerabilityCount
	}
	return sum
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
