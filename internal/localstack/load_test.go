package localstack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

// TestLoad runs 100 concurrent clients against the local server for
// SCANGATE_LOAD seconds (make load), mixing logins, reads, scan recordings
// and allowlist changes: half the time as 10 users, half as one caller
// with one token (a CI job's parallel uploads, whose writes must not
// collide on the write-time check of the caller's record). It passes when
// no answer is a 5xx, every scan recorded can be read back as recorded,
// and check finds no drift.
func TestLoad(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("SCANGATE_LOAD"))
	if secs <= 0 {
		t.Skip("set SCANGATE_LOAD to a number of seconds (make load)")
	}
	for _, one := range []bool{false, true} {
		t.Run(map[bool]string{false: "ten users", true: "one caller"}[one], func(t *testing.T) {
			runLoad(t, max(secs/2, 1), one)
		})
	}
}

func runLoad(t *testing.T, secs int, oneCaller bool) {
	const clients = 100
	env := ddbtest.New(t)
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 300 * time.Second, TokenTTL: time.Hour, Seed: true, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	admin := loginToken(t, api, "admin", "admin-password-1")
	for i := range 10 {
		do(t, "POST", api+"/users", admin, fmt.Sprintf(`{"username":"load%d","user_email":"load%d@example.com","password":"password-123","role":"user"}`, i, i))
	}
	for i := range 3 {
		do(t, "POST", api+"/whitelist", admin, fmt.Sprintf(`{"type":"SECRET","name":"sha256:%d","repos":[101],"reason":"false_positive"}`, i))
	}
	shared := ""
	if oneCaller {
		shared = loginToken(t, api, "load0", "password-123")
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
	type stat struct {
		n   int
		lat []time.Duration
	}
	var mu sync.Mutex
	stats := map[string]*stat{}
	recorded := map[int]string{} // scan id -> its repo_name, to read back
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if stats["_fail"] == nil {
			stats["_fail"] = &stat{}
		}
		if stats["_fail"].n++; stats["_fail"].n <= 10 {
			t.Errorf(format, args...)
		}
	}
	idRe := regexp.MustCompile(`^\{"id":(\d+),`)
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			user := fmt.Sprintf("load%d", c%10)
			token := shared
			for time.Now().Before(deadline) {
				var op, method, path, body string
				switch p := r.IntN(100); {
				case token == "" || p < 3 && !oneCaller:
					op, method, path = "login", "POST", "/auth/token"
					body = `{"username":"` + user + `","password":"password-123"}`
				case p < 70:
					op, method, path = "get-scan", "GET", fmt.Sprintf("/pr/scan/%d", 1+r.IntN(12))
				case p < 94:
					op, method, path = "record-scan", "POST", "/pr/scan"
					var fs []string
					for range r.IntN(5) {
						fs = append(fs, fmt.Sprintf(`{"name":"sha256:%d"}`, r.IntN(4)))
					}
					body = fmt.Sprintf(`{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":%d,"repo_name":"o/repo-%d-%d",`+
						`"webhook_id":1,"status":"completed","pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"},"findings":[%s]}`,
						101+r.IntN(2), c, r.IntN(1<<30), 1+r.IntN(20), strings.Join(fs, ","))
				default:
					op, method, path = "modify-allowlist", "PUT", fmt.Sprintf("/whitelist/%d", 1+r.IntN(3))
					body = fmt.Sprintf(`{"active":%v,"repos":[%d],"global_":%v}`, r.IntN(4) != 0, 101+r.IntN(2), r.IntN(5) == 0)
				}
				req, _ := http.NewRequest(method, api+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					fail("%s: %v", op, err)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				lat := time.Since(start)
				if op == "login" && resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "1" {
					// Other clients' logins for the same user hold every
					// place for a moment: retry as the answer says.
					time.Sleep(time.Second)
					continue
				}
				if resp.StatusCode >= 300 {
					fail("%s %s: %d %s", method, path, resp.StatusCode, b)
					continue
				}
				switch op {
				case "login":
					token = regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(string(b))[1]
				case "record-scan":
					id, _ := strconv.Atoi(idRe.FindStringSubmatch(string(b))[1])
					name := regexp.MustCompile(`"repo_name":"([^"]+)"`).FindStringSubmatch(body)[1]
					mu.Lock()
					recorded[id] = name
					mu.Unlock()
				}
				mu.Lock()
				s := stats[op]
				if s == nil {
					s = &stat{}
					stats[op] = s
				}
				s.n++
				s.lat = append(s.lat, lat)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, op := range []string{"login", "get-scan", "record-scan", "modify-allowlist"} {
		s := stats[op]
		if s == nil && op == "login" && oneCaller {
			continue
		}
		if s == nil {
			t.Errorf("no %s request succeeded", op)
			continue
		}
		slices.Sort(s.lat)
		total += s.n
		t.Logf("%-16s %6d ok  %7.1f/s  p50 %6.1f ms  p99 %7.1f ms", op, s.n, float64(s.n)/float64(secs),
			float64(s.lat[len(s.lat)/2].Microseconds())/1000, float64(s.lat[len(s.lat)*99/100].Microseconds())/1000)
	}
	t.Logf("%d clients, %d s: %d requests answered 2xx (%.0f/s)", clients, secs, total, float64(total)/float64(secs))
	// Lost writes: every recorded scan reads back as recorded.
	for id, name := range recorded {
		resp, b := do(t, "GET", api+"/pr/scan/"+strconv.Itoa(id), admin, "")
		if resp.StatusCode != 200 || !strings.Contains(b, `"repo_name":"`+name+`"`) {
			t.Errorf("scan %d recorded as %s reads back %d %s", id, name, resp.StatusCode, b)
		}
	}
	r, err := stack.Store.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Drift) > 0 {
		t.Fatalf("check reports %d drift: %v", len(r.Drift), r.Drift[:min(5, len(r.Drift))])
	}
	t.Logf("check: %d scans, %d findings, %d PRs, no drift; %d scans recorded under load all read back", r.Scans, r.Findings, r.PRs, len(recorded))
}
