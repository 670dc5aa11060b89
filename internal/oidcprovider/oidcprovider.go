// Package oidcprovider runs a real OpenID Connect provider for tests: node's
// oidc-provider (pinned in testdata/node/package-lock.json, installed with
// npm ci the first time a test needs it), configured by
// testdata/node/provider.mjs with three people and their `groups` claims
// (alice: sec-team and engineering; rita: auditors; mallory: marketing),
// the development sign-in form (any password), and the clients a test
// names. Start it, read its Issuer, and it stops when the test ends.
package oidcprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Client is one client of the provider, in oidc-provider's metadata.
type Client struct {
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	GrantTypes   []string `json:"grant_types,omitempty"`
	// TokenEndpointAuthMethod: client_secret_basic (oidc-provider's
	// default when a secret is set) or "none" for a public client.
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
}

// Account is a person the provider knows, by login name.
type Account struct {
	Email  string   `json:"email"`
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
}

// Options configure a provider.
type Options struct {
	Clients []Client
	// Accounts add people or replace the three of provider.mjs.
	Accounts map[string]Account
}

// Provider is a running provider.
type Provider struct {
	// Issuer is its URL (http://127.0.0.1:port), the iss of its tokens.
	Issuer string
	cmd    *exec.Cmd
	logs   *lockedWriter
}

// dir is testdata/node beside this file.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "node")
}

// ensureInstalled runs npm ci when node_modules is missing, under a lock
// file, since the test binaries of several packages may start providers
// at once.
func ensureInstalled() error {
	lock, err := os.OpenFile(filepath.Join(dir(), ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("the install lock: %w", err)
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("the install lock: %w", err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if _, err := os.Stat(filepath.Join(dir(), "node_modules", "oidc-provider", "package.json")); err == nil {
		return nil
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = dir()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w: %s", cmd.Dir, err, out)
	}
	return nil
}

// Required reports whether a missing node must fail the tests rather
// than skip them (SCANGATE_OIDC=1 or SCANGATE_BROWSER=1: make test-browser
// and CI).
func Required() bool { return os.Getenv("SCANGATE_OIDC") != "" || os.Getenv("SCANGATE_BROWSER") != "" }

// Start runs a provider for the test, stopped at its end. Without node the
// test is skipped, unless Required.
func Start(t testing.TB, o Options) *Provider {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if Required() {
			t.Fatal("no node on the PATH (apt-get install nodejs npm)")
		}
		t.Skip("no node on the PATH: the tests with a real OpenID provider need it (apt-get install nodejs npm)")
	}
	p, err := start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stop the provider: %v", err)
		}
	})
	return p
}

func start(o Options) (*Provider, error) {
	if err := ensureInstalled(); err != nil {
		return nil, err
	}
	clients, err := json.Marshal(o.Clients)
	if err != nil {
		return nil, err
	}
	accounts, err := json.Marshal(o.Accounts)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "provider.mjs")
	cmd.Dir = dir()
	cmd.Env = append(os.Environ(), "OIDC_CLIENTS="+string(clients), "OIDC_ACCOUNTS="+string(accounts))
	logs := &lockedWriter{}
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node provider.mjs: %w", err)
	}
	p := &Provider{cmd: cmd, logs: logs}
	issuer := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if u, ok := strings.CutPrefix(s.Text(), "issuer "); ok {
				issuer <- u
			}
		}
		close(issuer)
	}()
	select {
	case u, ok := <-issuer:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("the provider ended before it listened: %s", logs.String())
		}
		p.Issuer = u
	case <-time.After(30 * time.Second):
		_ = p.Stop()
		return nil, fmt.Errorf("the provider did not listen within 30 s: %s", logs.String())
	}
	return p, nil
}

// Stop ends the provider.
func (p *Provider) Stop() error {
	if p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		return errors.New("the provider did not stop within 10 s; killed")
	}
}

// SignIn signs login in at the provider as a browser would, through its
// development form (any password), starting at authURL (an authorization
// request), and returns the URL the provider redirects back to (the
// client's redirect URI with code and state, or with an error).
func (p *Provider) SignIn(ctx context.Context, authURL, login string) (*url.URL, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	var back *url.URL
	issuer, err := url.Parse(p.Issuer)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != issuer.Host {
			back = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	get := func(u string) (string, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", "", err
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		return resp.Request.URL.String(), string(b), err
	}
	at, page, err := get(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", err)
	}
	if back != nil {
		return back, nil
	}
	action := formAction(page)
	if action == "" {
		return nil, fmt.Errorf("no sign-in form at %s: %s", at, page)
	}
	target, err := url.Parse(at)
	if err != nil {
		return nil, err
	}
	submit, err := target.Parse(action)
	if err != nil {
		return nil, err
	}
	form := url.Values{"prompt": {"login"}, "login": {login}, "password": {"any-password"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, submit.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if back == nil {
		return nil, fmt.Errorf("the provider did not redirect back after the sign-in (%d): %s", resp.StatusCode, b)
	}
	return back, nil
}

// formAction is the action of the first form of page.
func formAction(page string) string {
	_, rest, ok := strings.Cut(page, `<form`)
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, `action="`)
	if !ok {
		return ""
	}
	action, _, _ := strings.Cut(rest, `"`)
	return strings.ReplaceAll(action, "&amp;", "&")
}

// Logs are what the provider wrote to its standard error.
func (p *Provider) Logs() string { return p.logs.String() }

type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
