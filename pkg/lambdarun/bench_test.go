package lambdarun_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/lambdarun"
	"github.com/scangate/scangate/pkg/local"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

// functions are the Lambdas measured, after the baseline.
var functions = []string{"authorizer", "login", "create-user", "update-user", "record-scan", "get-scan", "create-allowlist", "update-allowlist"}

const baselinePkg = "./pkg/lambdarun/testdata/baseline"

// build compiles a main package with the Lambda flags of the Makefile.
func build(b *testing.B, dir, pkg, goarch string) string {
	b.Helper()
	out := filepath.Join(dir, goarch, filepath.Base(pkg), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w -buildid=", "-o", out, pkg)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build %s: %v\n%s", pkg, err, b))
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// fixture is a table with an admin, a token, a scan and an allowlist, and
// the events each function is invoked with.
type fixture struct {
	env    []string
	events map[string]func(i int) []byte
}

func proxy(method, path string, params map[string]string, body string) []byte {
	b, _ := json.Marshal(map[string]any{
		"httpMethod": method, "path": path, "resource": path, "pathParameters": params, "body": body,
		"headers":        map[string]string{"Content-Type": "application/json"},
		"requestContext": map[string]any{"requestId": "bench", "authorizer": map[string]any{"user_id": "1", "username": "admin", "role": "admin"}},
	})
	return b
}

func newFixture(b *testing.B) fixture {
	ctx := context.Background()
	emb, err := local.StartEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = emb.Close() })
	db, err := store.NewClient(ctx, emb.URL)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.CreateTable(ctx, db, "bench"); err != nil {
		b.Fatal(err)
	}
	st := store.New(db, "bench")
	const password = "bench-password-1"
	if _, err := local.BootstrapAdmin(ctx, st, "admin", "admin@example.com", password); err != nil {
		b.Fatal(err)
	}
	tok, _ := auth.NewToken(1)
	if err := st.PutToken(ctx, scangate.Token{Hash: auth.HashToken(tok), UserID: 1, Kind: "cli", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		b.Fatal(err)
	}
	if err := local.Seed(ctx, st, time.Now()); err != nil {
		b.Fatal(err)
	}
	if _, _, err := st.CreateAllowlist(ctx, scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:5f2b9c0e8d1a", Active: true}, "", 1, time.Now()); err != nil {
		b.Fatal(err)
	}
	scan := `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":101,"repo_name":"r","webhook_id":1,` +
		`"status":"completed","pr":{"pr_id":10,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:5f2b9c0e8d1a"}]}`
	run := time.Now().UnixNano()
	return fixture{
		env: []string{"TABLE_NAME=bench", "DYNAMODB_ENDPOINT=" + emb.URL, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=bench",
			"AWS_SECRET_ACCESS_KEY=bench", "LOG_LEVEL=ERROR"},
		events: map[string]func(int) []byte{
			"baseline": func(int) []byte { return []byte(`{}`) },
			"authorizer": func(int) []byte {
				return []byte(`{"type":"TOKEN","authorizationToken":"Bearer ` + tok + `","methodArn":"arn:aws:execute-api:us-east-1:1:a/prod/GET/api/pr/scan/1"}`)
			},
			"login": func(int) []byte {
				return proxy("POST", "/api/auth/token", nil, `{"username":"admin","password":"`+password+`"}`)
			},
			"create-user": func(i int) []byte {
				return proxy("POST", "/api/users", nil, fmt.Sprintf(`{"username":"u%d-%d","user_email":"u%d-%d@example.com","password":"password-123","role":"user"}`, run, i, run, i))
			},
			"update-user": func(int) []byte {
				return proxy("PUT", "/api/users/1", map[string]string{"user_id": "1"}, `{"role":"admin","active":true,"user_email":"admin@example.com"}`)
			},
			"record-scan": func(int) []byte { return proxy("POST", "/api/pr/scan", nil, scan) },
			"get-scan":    func(int) []byte { return proxy("GET", "/api/pr/scan/1", map[string]string{"pr_scan_id": "1"}, "") },
			"create-allowlist": func(int) []byte {
				return proxy("POST", "/api/whitelist", nil, `{"type":"VULNERABILITY","name":"CVE-2021-44228"}`)
			},
			"update-allowlist": func(int) []byte {
				return proxy("PUT", "/api/whitelist/1", map[string]string{"whitelist_id": "1"}, `{"comment":"bench"}`)
			},
		},
	}
}

// BenchmarkColdStart runs each function's bootstrap (built for this
// machine) under the local Runtime API, beside the baseline: init (process
// start to first poll of next), warm invocation latency (invocations after
// the first) and peak memory, with ratios to the baseline.
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	fx := newFixture(b)
	var baseInit time.Duration
	var baseRSS float64
	for _, name := range append([]string{"baseline"}, functions...) {
		pkg := "./functions/" + name
		if name == "baseline" {
			pkg = baselinePkg
		}
		bin := build(b, dir, pkg, runtime.GOARCH)
		// One unmeasured run first, so that every binary starts from a warm
		// page cache, as the baseline would otherwise pay for all of them.
		if _, err := lambdarun.Run(context.Background(), bin, fx.env, nil); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		b.Run(name, func(b *testing.B) {
			var inits, warm []time.Duration
			var rss int64
			for i := 0; b.Loop(); i++ {
				events := make([][]byte, 6)
				for j := range events {
					events[j] = fx.events[name](6*i + j)
				}
				res, err := lambdarun.Run(context.Background(), bin, fx.env, events)
				if err != nil {
					b.Fatalf("%s: %v", name, err)
				}
				for _, r := range res.Responses {
					if name != "baseline" && name != "authorizer" && !bytes.Contains(r, []byte(`"statusCode":20`)) {
						b.Fatalf("%s answered %s", name, r)
					}
				}
				inits = append(inits, res.Init)
				warm = append(warm, res.Invocations[1:]...)
				rss = max(rss, res.PeakRSS)
			}
			init := median(inits)
			if name == "baseline" {
				baseInit, baseRSS = init, float64(rss)
			}
			b.ReportMetric(float64(init.Microseconds())/1000, "init-ms")
			b.ReportMetric(float64(init)/float64(baseInit), "init-x-baseline")
			b.ReportMetric(float64(median(warm).Microseconds())/1000, "warm-ms")
			b.ReportMetric(float64(rss)/1024, "peak-MiB")
			b.ReportMetric(float64(rss)/baseRSS, "mem-x-baseline")
		})
	}
}

// BenchmarkSize builds each linux/arm64 bootstrap as `make build` does,
// zips it as SAM does, and compares both with the baseline's.
func BenchmarkSize(b *testing.B) {
	dir := b.TempDir()
	var base, baseZip float64
	for _, name := range append([]string{"baseline"}, functions...) {
		pkg := "./functions/" + name
		if name == "baseline" {
			pkg = baselinePkg
		}
		bin := build(b, dir, pkg, "arm64")
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
			}
			raw, err := os.ReadFile(bin)
			if err != nil {
				b.Fatal(err)
			}
			var zipped bytes.Buffer
			zw := zip.NewWriter(&zipped)
			w, _ := zw.Create("bootstrap")
			_, _ = w.Write(raw)
			_ = zw.Close()
			if name == "baseline" {
				base, baseZip = float64(len(raw)), float64(zipped.Len())
			}
			b.ReportMetric(float64(len(raw))/(1<<20), "MiB")
			b.ReportMetric(float64(len(raw))/base, "size-x-baseline")
			b.ReportMetric(float64(zipped.Len())/(1<<20), "zip-MiB")
			b.ReportMetric(float64(zipped.Len())/baseZip, "zip-x-baseline")
		})
	}
}
