// Package receivertest runs, for tests, the webhook receiver written in
// another language: internal/events/webhook/testdata/receiver/receiver.py, which
// verifies every delivery with the Standard Webhooks library for Python
// (PyPI standardwebhooks, pinned in its requirements.txt). make
// test-webhooks installs it into .build/webhook-venv and sets
// SCANGATE_WEBHOOK_RECEIVER to that venv's python, so CI fails when it is
// missing; without either, the tests that need it are skipped.
package receivertest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Log is what a receiver recorded (GET /log).
type Log struct {
	Attempts []struct {
		WebhookID string `json:"webhook_id"`
		Status    int    `json:"status"`
		Body      string `json:"body"`
	} `json:"attempts"`
	Events []struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		OccurredAt string          `json:"occurred_at"`
		Data       json.RawMessage `json:"data"`
	} `json:"events"`
	Rejected []struct {
		WebhookID string `json:"webhook_id"`
		Error     string `json:"error"`
	} `json:"rejected"`
}

// root is the repository's root.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Python returns the interpreter that has standardwebhooks, or skips the
// test when there is none and none is required.
func Python(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SCANGATE_WEBHOOK_RECEIVER"); p != "" {
		return p
	}
	p := filepath.Join(root(), ".build", "webhook-venv", "bin", "python")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no Python receiver: run make test-webhooks (or set SCANGATE_WEBHOOK_RECEIVER)")
	}
	return p
}

// Start starts a receiver that knows secret (given in its environment,
// never on its command line), with receiver.py's options (--fail-first N,
// --gone), and returns its base URL; it is stopped when the test ends.
func Start(t testing.TB, secret string, args ...string) string {
	t.Helper()
	python := Python(t)
	script := filepath.Join(root(), "internal", "events", "webhook", "testdata", "receiver", "receiver.py")
	cmd := exec.Command(python, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "RECEIVER_SECRET="+secret)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the receiver with %s: %v", python, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("the receiver said %q (%v)", line, err)
	}
	return "http://127.0.0.1:" + port
}

// Read reads what the receiver at url recorded.
func Read(t testing.TB, url string) Log {
	t.Helper()
	resp, err := http.Get(url + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var l Log
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}
