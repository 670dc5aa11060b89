// Package secretstest is a stand-in of AWS Secrets Manager's
// GetSecretValue for tests: its JSON protocol as the SDK speaks it, signed
// requests only, the secrets it is given by id, and a count of the
// requests it got.
package secretstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	secrets map[string]string
	// Fail makes it answer 500 (the SDK retries, then gives up).
	Fail     atomic.Bool
	requests atomic.Int64
	mu       sync.Mutex
	ids      []string
}

// Start starts a stand-in holding secrets (id: SecretString), closed when
// the test ends.
func Start(t testing.TB, secrets map[string]string) *Server {
	s := &Server{secrets: secrets}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// Requests counts the requests it got.
func (s *Server) Requests() int64 { return s.requests.Load() }

// IDs are the secret ids asked for, in order.
func (s *Server) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...)
}

// ServeHTTP answers GetSecretValue.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	var in struct{ SecretId string }
	_ = json.Unmarshal(body, &in)
	s.mu.Lock()
	s.ids = append(s.ids, in.SecretId)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch v, ok := s.secrets[in.SecretId]; {
	case r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "):
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"InvalidRequestException","message":"not GetSecretValue, or not signed"}`))
	case s.Fail.Load():
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"__type":"InternalServiceError","message":"down"}`))
	case !ok:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`))
	default:
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": "key", "SecretString": v, "VersionId": "v1"})
	}
}
