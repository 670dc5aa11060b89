package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

const adminPassword = "admin-password-1"

// clock is the local stack's clock: now, moved forward by the test.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// browser is a headless Chromium showing the dashboard of a local stack of
// its own (make run's, in process, with a clock the test moves).
type browser struct {
	ctx   context.Context
	url   string // the dashboard, http://127.0.0.1:port
	api   string // the API beside it, url + "/api"
	stack *localstack.Stack
	clock *clock
	logs  string // the local server's log file (slog writes it under its lock)
	axe   string // axe-core's source; empty when it is not installed
	shots string // where screenshots go
	shot  int    // the number of the last screenshot

	mu         sync.Mutex
	requests   []string // every URL the page asked for
	exceptions []string // the page's uncaught exceptions
}

// chromium finds the browser: $CHROMIUM, else chromium on the PATH. The
// tests skip without one, unless SCANGATE_BROWSER is set (make
// test-browser, CI), where a missing browser fails them.
func chromium(t *testing.T) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SCANGATE_BROWSER") != "" {
		t.Fatal("SCANGATE_BROWSER is set, but there is no Chromium: apt-get install chromium, or set CHROMIUM to its path")
	}
	t.Skip("no Chromium (set CHROMIUM, or install Debian's chromium): make test-browser runs these tests")
	return ""
}

// axeSource reads axe-core as npm ci installed it (make test-browser).
func axeSource(t *testing.T) string {
	b, err := os.ReadFile("testdata/axe/node_modules/axe-core/axe.min.js")
	if err != nil {
		if os.Getenv("SCANGATE_BROWSER") != "" {
			t.Fatalf("axe-core is not installed (cd internal/dashboard/testdata/axe && npm ci): %v", err)
		}
		t.Log("axe-core is not installed: the pages are not checked for accessibility (make test-browser installs it)")
		return ""
	}
	return string(b)
}

// watch records, before any page runs, the violations of the page's
// Content-Security-Policy.
const watch = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '')));`

func startBrowser(t *testing.T) *browser {
	exe := chromium(t)
	b := &browser{clock: &clock{}, logs: filepath.Join(t.TempDir(), "server.log"), axe: axeSource(t)}
	logs, err := os.Create(b.logs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logs.Close() })
	env := ddbtest.New(t)
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB,
		AdminUsername: "admin", AdminPassword: adminPassword,
		AuthorizerTTL: 0, TokenTTL: 7 * 24 * time.Hour, Seed: true, // the clock moves more than a day (a delivery's attempts)
		Log: slog.New(slog.NewJSONHandler(logs, nil)), Now: b.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	b.stack = stack
	srv := httptest.NewServer(dashboard.Local(stack.Handler))
	t.Cleanup(srv.Close)
	b.url, b.api = srv.URL, srv.URL+"/api"
	if b.shots, err = filepath.Abs("../../.build/screenshots"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	// The folder holds this run's screenshots only: an earlier run's, of
	// pages since renamed or renumbered, are removed.
	old, err := filepath.Glob(filepath.Join(b.shots, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// A bound on the whole run, so that a hung browser fails the test
	// rather than the package's timeout; no step is timed.
	ctx, cancelRun := context.WithTimeout(ctx, 10*time.Minute)
	t.Cleanup(func() {
		cancelRun()
		cancel()
		cancelAlloc()
	})
	b.ctx = ctx
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watch}); err != nil {
		t.Fatal(err)
	}
	return b
}

// record keeps the URLs the page asks for and its exceptions.
func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL+ev.Request.URLFragment)
	case *page.EventFrameNavigated:
		b.requests = append(b.requests, ev.Frame.URL+ev.Frame.URLFragment)
	case *page.EventNavigatedWithinDocument:
		b.requests = append(b.requests, ev.URL)
	case *runtime.EventExceptionThrown:
		b.exceptions = append(b.exceptions, ev.ExceptionDetails.Text+" "+describe(ev.ExceptionDetails))
	}
}

func describe(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// void is an action whose value is dropped.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval runs JavaScript in the page (awaiting a promise) and decodes its
// value.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// view is the number of the page shown last (main's data-view).
func (b *browser) view(t *testing.T) int {
	return eval[int](t, b, `Number(document.getElementById('main')?.dataset.view || 0)`)
}

// shown waits until a page after view before is shown, and checks it is
// the page named.
func (b *browser) shown(t *testing.T, before int, name string) {
	t.Helper()
	cond := fmt.Sprintf(`(() => { const m = document.getElementById('main'); return m && Number(m.dataset.view || 0) > %d && m.getAttribute('aria-busy') === 'false'; })()`, before)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("waiting for the %s page: %v", name, err)
	}
	if got := eval[string](t, b, `document.getElementById('main').dataset.page`); got != name {
		t.Fatalf("the %s page is shown; want %s (%s)", got, name, b.text(t, "main"))
	}
}

// open shows the page of a fragment (#/pr/1), as following a link does.
func (b *browser) open(t *testing.T, hash, name string) {
	t.Helper()
	before := b.view(t)
	eval[bool](t, b, fmt.Sprintf(`(() => { const h = %q; if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange')); else location.hash = h; return true; })()`, hash))
	b.shown(t, before, name)
}

// reload loads the document again (the session stays: sessionStorage).
func (b *browser) reload(t *testing.T, name string) {
	t.Helper()
	b.do(t, void(chromedp.Evaluate[bool](`window.__old = true`)), chromedp.Reload())
	cond := `!window.__old && document.getElementById('main')?.getAttribute('aria-busy') === 'false' && Number(document.getElementById('main').dataset.view || 0) > 0`
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, b, `document.getElementById('main').dataset.page`); got != name {
		t.Fatalf("the %s page is shown; want %s", got, name)
	}
}

// act runs actions that show a page (a link followed, a form sent) and
// waits for it.
func (b *browser) act(t *testing.T, name string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	before := b.view(t)
	b.do(t, actions...)
	b.shown(t, before, name)
}

// requested is every URL the page has asked for so far.
func (b *browser) requested() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	return eval[string](t, b, fmt.Sprintf(`document.querySelector(%q)?.textContent ?? ''`, sel))
}

// page checks the page shown as people and tools rely on it (one h1,
// every control labelled, no serious or critical axe-core violation),
// and keeps its screenshot, numbered in the order taken (07-shot.png).
func (b *browser) page(t *testing.T, name string) {
	t.Helper()
	b.shot++
	shot := fmt.Sprintf("%02d-%s", b.shot, name)
	if n := eval[int](t, b, `document.querySelectorAll('h1').length`); n != 1 {
		t.Errorf("%s: %d h1 elements; want 1", shot, n)
	}
	unlabelled := eval[[]string](t, b, `[...document.querySelectorAll('input, select, textarea')]
		.filter((c) => c.type !== 'hidden' && !(c.labels && c.labels.length))
		.map((c) => c.outerHTML)`)
	if len(unlabelled) > 0 {
		t.Errorf("%s: controls without a label: %v", shot, unlabelled)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, shot+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if b.axe == "" {
		return
	}
	if !eval[bool](t, b, `typeof window.axe === 'object'`) {
		if err := chromedp.Do(b.ctx, void(chromedp.Evaluate[any](b.axe))); err != nil {
			t.Fatal(err)
		}
	}
	res := eval[struct {
		Passes     int
		Violations []struct {
			ID, Impact, Help string
			Nodes            []string
		}
	}](t, b, `axe.run(document).then((r) => ({passes: r.passes.length, violations: r.violations.map((v) =>
		({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' '))}))}))`)
	t.Logf("%s: axe-core: %d rules passed, %d violated", shot, res.Passes, len(res.Violations))
	for _, v := range res.Violations {
		msg := fmt.Sprintf("%s: axe-core: %s (%s): %s at %v", shot, v.ID, v.Impact, v.Help, v.Nodes)
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

// call sends a request to the API as a client other than the browser.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func login(t *testing.T, api string) string {
	t.Helper()
	code, body := call(t, "POST", api+"/auth/token", "", `{"username":"admin","password":"`+adminPassword+`"}`)
	if code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// prID finds the id of the PR (vc_id 1, repo 101, number) through the API.
func prID(t *testing.T, api, token string, number int) int64 {
	t.Helper()
	code, body := call(t, "GET", api+"/pr?vc_id=1&repo_id=101&limit=100", token, "")
	if code != 200 {
		t.Fatalf("list PRs: %d %s", code, body)
	}
	var page struct {
		Items []struct {
			ID   int64 `json:"id"`
			PRID int   `json:"pr_id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	for _, p := range page.Items {
		if p.PRID == number {
			return p.ID
		}
	}
	t.Fatalf("no PR #%d of repository 101: %s", number, body)
	return 0
}

var hrefPR = regexp.MustCompile(`^#/pr/[1-9][0-9]*$`)
