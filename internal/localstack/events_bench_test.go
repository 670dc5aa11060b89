package localstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
)

// arrivals is a receiver's record of when each event arrived, by the name
// of the allowlist it tells of; wait returns once n have.
type arrivals struct {
	mu   sync.Mutex
	at   map[string]time.Time
	want int
	all  chan struct{}
}

func (a *arrivals) expect(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at, a.want, a.all = map[string]time.Time{}, n, make(chan struct{})
}

func (a *arrivals) add(name string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, seen := a.at[name]; !seen && a.all != nil {
		a.at[name] = at
		if len(a.at) == a.want {
			close(a.all)
		}
	}
}

// BenchmarkEventDelivery: changes (allowlists created by 8 writers at
// once, through the store) whose events reach a local receiver that
// verifies every signature with the Standard Webhooks library: through
// the table's stream (the local stack's), the dispatcher, the
// first-attempt queue and the deliverer. change-to-delivery: the stream
// runs while the changes are written; the latency from a change's start to
// its event's arrival (p50, p99), and the events a second from the first
// change to the last arrival, which the writers bound. dispatch: the
// changes are written while the stream is held, then released; the events
// a second through dispatch and delivery alone. gate-change-to-delivery:
// b.N pull requests, each blocked by a secret of its own, are each
// unblocked by an allowlist of that secret (8 writers at once): the
// latency from the change's start to the arrival of the PR's
// pr.gate_changed (the allowlist's re-evaluation writes the gate and its
// event in one transaction), p50 and p99: the contract's 60 seconds
// measured. make bench runs it on
// DynamoDB Local with -benchtime 1000x (the embedded server answers a
// Query by reading every item, so its changes slow down as the table
// grows).
func BenchmarkEventDelivery(b *testing.B) {
	ctx := context.Background()
	env := ddbtest.New(b)
	stack, err := localstack.Start(ctx, localstack.Options{Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin",
		AdminPassword: "bench-password-1", TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = stack.Close() }()
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	resp, body := do(b, "POST", api+"/auth/token", "", `{"username":"admin","password":"bench-password-1"}`)
	if resp.StatusCode != 200 {
		b.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	admin := regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(body)[1]

	var verifier *standardwebhooks.Webhook
	got, gates := &arrivals{}, &arrivals{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		now := time.Now()
		if err := verifier.Verify(body, r.Header); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Name   string `json:"name"`
				Number int64  `json:"number"`
				Cause  string `json:"cause"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		switch {
		case ev.Type == scangate.EventAllowlistCreated:
			got.add(ev.Data.Name, now)
		case ev.Data.Cause == scangate.CauseAllowlist: // not the recordings' before
			gates.add(fmt.Sprint(ev.Data.Number), now)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	resp, body = do(b, "POST", api+"/webhooks", admin, `{"url":"`+recv.URL+`","events":["allowlist.created","pr.gate_changed"]}`)
	if resp.StatusCode != 201 {
		b.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	if verifier, err = standardwebhooks.NewWebhook(regexp.MustCompile(`"secret":"([^"]+)"`).FindStringSubmatch(body)[1]); err != nil {
		b.Fatal(err)
	}
	run := 0
	changes := func(b *testing.B) []time.Time {
		run++
		started := make([]time.Time, b.N)
		const writers = 8
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := w; i < b.N; i += writers {
					started[i] = time.Now()
					_, it, err := stack.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret,
						Name: fmt.Sprintf("sha256:%d-%d", run, i), Active: true, Global: true}}, "", scangate.Who{RequestID: "bench"}, time.Now(), 0)
					if err == nil {
						_, err = stack.Store.Runner(time.Now, nil).Continue(ctx, it)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return started
	}
	wait := func(b *testing.B, a *arrivals) {
		select {
		case <-a.all:
		case <-time.After(10 * time.Minute):
			b.Fatalf("%d of %d events arrived", len(a.at), b.N)
		}
	}
	last := func() time.Time {
		var t time.Time
		for _, at := range got.at {
			if at.After(t) {
				t = at
			}
		}
		return t
	}
	latencies := func(b *testing.B, a *arrivals, started []time.Time, key func(i int) string) {
		lat := make([]time.Duration, 0, b.N)
		for i := range b.N {
			lat = append(lat, a.at[key(i)].Sub(started[i]))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.Run("change-to-delivery", func(b *testing.B) {
		got.expect(b.N)
		begin := time.Now()
		started := changes(b)
		wait(b, got)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/last().Sub(begin).Seconds(), "events/s")
		latencies(b, got, started, func(i int) string { return fmt.Sprintf("sha256:%d-%d", run, i) })
		b.ReportMetric(0, "ns/op")
	})
	b.Run("dispatch", func(b *testing.B) {
		got.expect(b.N)
		release := stack.Stream("DispatchEventsFunction").Hold()
		changes(b)
		b.ResetTimer()
		begin := time.Now()
		release()
		wait(b, got)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/last().Sub(begin).Seconds(), "events/s")
		b.ReportMetric(0, "ns/op")
	})
	prs := 0
	b.Run("gate-change-to-delivery", func(b *testing.B) {
		b.StopTimer()
		first := prs + 1
		for i := range b.N { // b.N blocked PRs, each by a secret of its own
			ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "gh", RepoID: 1, RepoName: "acme/api",
				WebhookID: 1, PR: scangate.PRRef{Number: int64(first + i), Name: "n", Link: "l"}, Status: "completed",
				Findings: []scangate.Finding{{Name: fmt.Sprintf("sha256:gate-%d", first+i)}}}
			if _, _, err := stack.Store.RecordScan(ctx, ns, scangate.Who{RequestID: "bench"}, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		prs += b.N
		gates.expect(b.N)
		started := make([]time.Time, b.N)
		b.StartTimer()
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < b.N; i += 8 {
					started[i] = time.Now()
					_, it, err := stack.Store.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret,
						Name: fmt.Sprintf("sha256:gate-%d", first+i), Active: true, Repos: []int64{1}}, Reason: "false_positive"}, "",
						scangate.Who{RequestID: "bench"}, time.Now(), 0)
					if err == nil {
						_, err = stack.Store.Runner(time.Now, nil).Continue(ctx, it)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		wait(b, gates)
		b.StopTimer()
		latencies(b, gates, started, func(i int) string { return fmt.Sprint(first + i) })
		b.ReportMetric(0, "ns/op")
	})
}
