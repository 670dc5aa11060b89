// Package secretstest is a stand-in of AWS Secrets Manager's
// GetSecretValue for tests: its JSON 1.1 protocol, requests signed with
// Signature Version 4 for secretsmanager only (the shape of the signature:
// the stand-in does not know the secret key), the secrets it is given by id, and a count of the
// requests it got.
package secretstest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	secrets map[string]string
	// SecretAccessKey, when set, is the key requests must be signed with:
	// the stand-in signs each request again and compares the signatures.
	SecretAccessKey string
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
	case r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" ||
		r.Header.Get("Content-Type") != "application/x-amz-json-1.1" ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=") ||
		!strings.Contains(r.Header.Get("Authorization"), "/secretsmanager/aws4_request") || r.Header.Get("X-Amz-Date") == "":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"InvalidRequestException","message":"not GetSecretValue, or not signed"}`))
	case s.SecretAccessKey != "" && !s.signedWith(r, body):
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"InvalidSignatureException","message":"The request signature we calculated does not match the signature you provided."}`))
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

// signedWith reports whether r's signature is the one the SDK's signer
// makes for it with SecretAccessKey: the same signed headers, the same
// body, at the request's X-Amz-Date, in the scope its credential names.
func (s *Server) signedWith(r *http.Request, body []byte) bool {
	auth := r.Header.Get("Authorization")
	cred, _, _ := strings.Cut(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 Credential="), ",")
	scope := strings.Split(cred, "/") // id/date/region/service/aws4_request
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if len(scope) != 5 || err != nil {
		return false
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	again.Header.Del("Authorization")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: s.SecretAccessKey, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), scope[3], scope[2], at); err != nil {
		return false
	}
	return again.Header.Get("Authorization") == auth
}
