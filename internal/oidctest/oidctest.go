// Package oidctest stands in, for tests, for a CI system's OpenID
// provider: its discovery document and the keys it publishes (which a
// test may rotate), on loopback; and it signs and forges id tokens with
// go-jose.
package oidctest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is a stand-in OpenID provider.
type Issuer struct {
	URL      string
	srv      *httptest.Server
	mu       sync.Mutex
	keys     []jose.JSONWebKey
	fetches  atomic.Int64
	failKeys atomic.Bool
}

// New starts an issuer that publishes no key yet; it stops when the test
// ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/keys",
				"id_token_signing_alg_values_supported": []string{"RS256", "ES256"}})
		case "/keys":
			is.fetches.Add(1)
			if is.failKeys.Load() {
				http.Error(w, `{"error":"down"}`, http.StatusInternalServerError)
				return
			}
			is.mu.Lock()
			defer is.mu.Unlock()
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
		default:
			http.NotFound(w, r)
		}
	}))
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

// Fetches is how many times its keys were fetched.
func (is *Issuer) Fetches() int64 { return is.fetches.Load() }

// FailKeys makes the issuer answer 500 to a fetch of its keys (fail) or
// publish them again (!fail): its discovery document is still served.
func (is *Issuer) FailKeys(fail bool) { is.failKeys.Store(fail) }

// Publish makes the issuer publish exactly these keys' public halves.
func (is *Issuer) Publish(keys ...jose.JSONWebKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = nil
	for _, k := range keys {
		is.keys = append(is.keys, k.Public())
	}
}

// RSAKey is a new RSA signing key with the key id kid.
func RSAKey(t testing.TB, kid string) jose.JSONWebKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "RS256", Use: "sig"}
}

// Sign signs claims with key as a compact JWT.
func Sign(t testing.TB, key jose.JSONWebKey, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Forge builds a token with header and a signature of its own making
// (none, an HMAC of the public key...).
func Forge(header, claims map[string]any, sig func(input string) []byte) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig(input))
}

// GitHubClaims are the claims of a GitHub Actions job's id token of iss
// for aud, naming the repository repoID, issued at now for 5 minutes.
func GitHubClaims(iss, aud, repoID string, now time.Time) map[string]any {
	return map[string]any{"iss": iss, "aud": aud, "sub": "repo:acme/api:ref:refs/heads/main", "repository": "acme/api",
		"repository_id": repoID, "ref": "refs/heads/main", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

// PublicPEM is the PEM of key's public half (what an HMAC-confusion
// attacker would use as the secret).
func PublicPEM(t testing.TB, key jose.JSONWebKey) []byte {
	t.Helper()
	pub, err := x509.MarshalPKIXPublicKey(key.Public().Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
}

// HS256 signs a forged token's input with HMAC-SHA256 keyed with secret
// (for Forge).
func HS256(secret []byte) func(input string) []byte {
	return func(input string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(input))
		return m.Sum(nil)
	}
}
