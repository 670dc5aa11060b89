package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/sarif"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// retaining is a store that, each time a part of findings is handed to
// it, collects the garbage and counts how many of the parts handed before
// are still alive (held by anything: the reader, the route, the store).
type retaining struct {
	*store.Store
	mu     sync.Mutex
	handed []weak.Pointer[scangate.Finding]
	alive  []int // at each part, the earlier parts alive
}

func (r *retaining) RecordScansFrom(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time, once string,
	fill func(add func(int, []scangate.Finding) error) error) ([]scangate.Scan, scangate.PR, bool, error) {
	return r.Store.RecordScansFrom(ctx, nss, who, now, once, func(add func(int, []scangate.Finding) error) error {
		return fill(func(i int, fs []scangate.Finding) error {
			r.mu.Lock()
			runtime.GC()
			n := 0
			for _, p := range r.handed {
				if p.Value() != nil {
					n++
				}
			}
			r.alive = append(r.alive, n)
			r.handed = append(r.handed, weak.Make(&fs[0]))
			r.mu.Unlock()
			return add(i, fs)
		})
	})
}

// trivyLog is a log of runs of trivy, each of n distinct advisories in
// its own category (automationDetails), as one upload of several images.
func trivyLog(runs, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":"2.1.0","runs":[`)
	for r := range runs {
		if r > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"tool":{"driver":{"name":"trivy","version":"0.67.2"}},"automationDetails":{"id":"trivy/image-%d/1"},"results":[`, r)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"ruleId":"CVE-2099-%d","level":"error","message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"lib/p%d"}}}]}`, r*n+i, i)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestRecordLogKeepsNoFinding: recording a log of 12 runs, the route and
// the store hold no finding of a run once it is written: when a run's
// findings are handed to the store, the runs before it have been
// collected but for those still being written (api.RunsInFlight at
// once). Memory holds a few runs at a time (and the reader's
// de-duplication set), not the log. The scans are recorded whole.
func TestRecordLogKeepsNoFinding(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	st := &retaining{Store: env.Store}
	const runs = 12
	raw := trivyLog(runs, 300)
	envelope := scangate.NewScan{VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r", WebhookID: 1,
		PR: scangate.PRRef{Number: 1, Name: "n", Link: "l"}, Status: "completed"}
	read := func(h sarif.Handler) (scangate.NewScan, sarif.Counts, error) {
		c, err := sarif.Read(bytes.NewReader(raw), sarif.Options{}, h)
		return envelope, c, api.SARIFError(err)
	}
	out, err := api.RecordLog(context.Background(), st, read, api.Recording{Who: scangate.Who{RequestID: "test"}, At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.alive) != runs {
		t.Fatalf("%d parts handed; want one a run, %d", len(st.alive), runs)
	}
	for k, n := range st.alive {
		if n > api.RunsInFlight-1 {
			t.Errorf("when run %d was handed on, %d runs before it were still held (%d are written at once): %v", k, n, api.RunsInFlight, st.alive)
			break
		}
	}
	var b map[string]any
	if err := json.Unmarshal([]byte(mustJSON(out)), &b); err != nil {
		t.Fatal(err)
	}
	if b["recorded"] != 3600.0 || len(b["scans"].([]any)) != runs {
		t.Errorf("recorded %v findings in %d scans", b["recorded"], len(b["scans"].([]any)))
	}
	rep, err := env.Store.Check(context.Background())
	if err != nil || rep.Scans != runs || rep.Findings != 3600 || rep.Unrecorded != 0 || len(rep.Drift) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}
