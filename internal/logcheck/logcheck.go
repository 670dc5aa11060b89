// Package logcheck is the log of a test's service: it keeps every line the
// service logs and, when the test ends, fails it if a line that claims to
// be a CloudWatch embedded metric (an _aws member) breaks the format's
// rules, or if any line holds a secret the test used. The secrets are
// those the test names and those its HTTP traffic carried, read by the
// sink's Handler in front of the service: bearer tokens, and the
// passwords, tokens and webhook secrets of JSON bodies, in requests and
// answers alike.
package logcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/metrics"
)

// minSecret is the shortest value taken for a secret: shorter ones (a
// placeholder such as "x") would match text that is no secret.
const minSecret = 8

// maxBody is the most of a body the handler reads for secrets.
const maxBody = 1 << 20

// Sink is a test's log. It is safe for concurrent use.
type Sink struct {
	mu      sync.Mutex
	lines   [][]byte
	partial []byte
	secrets map[string]bool
}

// New is the sink of t's service, checked when t ends.
func New(t testing.TB) *Sink {
	s := Open()
	t.Cleanup(func() { s.check(t) })
	return s
}

// Open is a sink that nothing checks but its Problems.
func Open() *Sink { return &Sink{secrets: map[string]bool{}} }

// Logger is the service's JSON logger writing to the sink, at DEBUG so
// that every line the service may write is checked.
func (s *Sink) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Write keeps the lines of p.
func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.lines = append(s.lines, bytes.Clone(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	return len(p), nil
}

// Secret names secrets the test used that no request carries (a password
// read from a file, a value planted in a scan).
func (s *Sink) Secret(vs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if len(v) >= minSecret {
			s.secrets[v] = true
		}
	}
}

// EMF is how many metric lines the sink has seen.
func (s *Sink) EMF() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lines {
		if metrics.IsEMF(l) {
			n++
		}
	}
	return n
}

// Lines are the lines logged so far.
func (s *Sink) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.lines))
	for i, l := range s.lines {
		out[i] = string(l)
	}
	return out
}

// check fails t for every problem the log has.
func (s *Sink) check(t testing.TB) {
	for _, p := range s.Problems() {
		t.Error(p)
	}
}

// Problems are what is wrong with the log so far: every metric line the
// format refuses, every line that holds a secret (in any case).
func (s *Sink) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := s.lines
	if len(s.partial) > 0 {
		lines = append(lines, s.partial)
	}
	var out []string
	for _, l := range lines {
		if metrics.IsEMF(l) {
			if err := metrics.Check(l); err != nil {
				out = append(out, fmt.Sprintf("a metric line breaks the embedded metric format: %v\n%s", err, l))
			}
		}
		lower := strings.ToLower(string(l))
		for v := range s.secrets {
			if strings.Contains(lower, strings.ToLower(v)) {
				out = append(out, fmt.Sprintf("a log line holds a secret the test used (%d characters, starting %.3s): %s", len(v), v, l))
			}
		}
	}
	return out
}

// Handler is h with the secrets of its traffic taken for the check.
func (s *Sink) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			s.Secret(strings.TrimSpace(tok))
		}
		if r.Body != nil && isJSON(r.Header.Get("Content-Type"), r.Method) {
			b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
			rest := r.Body
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), rest), rest}
			if err == nil {
				s.harvest(b)
			}
		}
		tw := &tee{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		if strings.Contains(w.Header().Get("Content-Type"), "json") {
			s.harvest(tw.body.Bytes())
		}
	})
}

// isJSON: a body sent as JSON, or with no type (curl -d sends its own).
func isJSON(contentType, method string) bool {
	return method != http.MethodGet && (contentType == "" || strings.Contains(contentType, "json") ||
		strings.Contains(contentType, "x-www-form-urlencoded"))
}

// secretKeys are the members of the API's bodies that carry a secret.
func secretKey(k string) bool {
	switch strings.ToLower(k) {
	case "password", "secret", "token", "access_token", "new_password", "current_password", "admin_password":
		return true
	}
	return false
}

// harvest takes the secrets of a JSON body (lines of JSON too), or of a
// form (a token request may be one).
func (s *Sink) harvest(b []byte) {
	dec := json.NewDecoder(bytes.NewReader(b))
	n := 0
	for ; ; n++ {
		var v any
		if dec.Decode(&v) != nil {
			break
		}
		s.walk(v)
	}
	if n > 0 {
		return
	}
	if form, err := url.ParseQuery(string(b)); err == nil {
		for k, vs := range form {
			if secretKey(k) {
				s.Secret(vs...)
			}
		}
	}
}

func (s *Sink) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if str, ok := x.(string); ok && secretKey(k) {
				s.Secret(str)
				continue
			}
			s.walk(x)
		}
	case []any:
		for _, x := range v {
			s.walk(x)
		}
	}
}

// tee keeps a copy of an answer's first maxBody bytes.
type tee struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *tee) Write(p []byte) (int, error) {
	if room := maxBody - t.body.Len(); room > 0 {
		t.body.Write(p[:min(len(p), room)])
	}
	return t.ResponseWriter.Write(p)
}

// Flush lets a streamed answer through.
func (t *tee) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (t *tee) Unwrap() http.ResponseWriter { return t.ResponseWriter }
