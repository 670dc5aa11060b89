package ciauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/ciauth"
	"github.com/scangate/scangate/internal/egress"
)

// issuer stands in for a CI's OpenID provider: its discovery document and
// the keys it publishes (which a test may rotate), on loopback.
type issuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int64
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys",
				"id_token_signing_alg_values_supported": []string{"RS256", "ES256"}})
		case "/keys":
			is.fetches.Add(1)
			is.mu.Lock()
			defer is.mu.Unlock()
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: is.keys})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// publish makes the issuer publish exactly these keys' public halves.
func (is *issuer) publish(keys ...jose.JSONWebKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = nil
	for _, k := range keys {
		is.keys = append(is.keys, k.Public())
	}
}

func rsaKey(t *testing.T, kid string) jose.JSONWebKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "RS256", Use: "sig"}
}

// sign signs claims with key.
func sign(t *testing.T, key jose.JSONWebKey, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
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

// forge builds a token with header and a signature of its own making.
func forge(header, claims map[string]any, sig func(input string) []byte) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig(input))
}

const audience = "https://scangate.example.com"

// githubClaims are the claims of a GitHub Actions job's id token.
func githubClaims(iss string, now time.Time) map[string]any {
	return map[string]any{"iss": iss, "aud": audience, "sub": "repo:acme/api:ref:refs/heads/main", "repository": "acme/api",
		"repository_id": "4242", "ref": "refs/heads/main", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

func verifier(now time.Time) *ciauth.Verifier {
	return ciauth.NewVerifier(egress.Policy{LoopbackHTTP: true}.Client(5*time.Second), func() time.Time { return now })
}

// TestVerify: a token the issuer signed, for the audience, valid now,
// verifies and names its repository (GitHub's repository_id, GitLab's
// project_id); a key rotated in is picked up by fetching the keys again.
func TestVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := newIssuer(t)
	now := time.Now()
	k1, k2 := rsaKey(t, "k1"), rsaKey(t, "k2")
	is.publish(k1)
	v := verifier(now)
	c, err := v.Verify(ctx, is.srv.URL, audience, sign(t, k1, jose.RS256, githubClaims(is.srv.URL, now)))
	if err != nil || c.RepoID != "4242" || c.Subject != "repo:acme/api:ref:refs/heads/main" || c.All["ref"] != "refs/heads/main" {
		t.Fatalf("claims %+v, %v", c, err)
	}
	gitlab := githubClaims(is.srv.URL, now)
	delete(gitlab, "repository_id")
	gitlab["project_id"] = "77"
	if c, err := v.Verify(ctx, is.srv.URL, audience, sign(t, k1, jose.RS256, gitlab)); err != nil || c.RepoID != "77" {
		t.Fatalf("GitLab's claims %+v, %v", c, err)
	}
	// An ECDSA key too.
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec := jose.JSONWebKey{Key: ek, KeyID: "e1", Algorithm: "ES256", Use: "sig"}
	// Rotation: the issuer now publishes k2 and e1; a token of k2 verifies.
	before := is.fetches.Load()
	is.publish(k2, ec)
	if _, err := v.Verify(ctx, is.srv.URL, audience, sign(t, k2, jose.RS256, githubClaims(is.srv.URL, now))); err != nil {
		t.Fatalf("a rotated key: %v", err)
	}
	if is.fetches.Load() == before {
		t.Errorf("a key id it did not know verified without fetching the keys again")
	}
	if _, err := v.Verify(ctx, is.srv.URL, audience, sign(t, ec, jose.ES256, githubClaims(is.srv.URL, now))); err != nil {
		t.Fatalf("an ECDSA key: %v", err)
	}
	if iss, err := ciauth.UnverifiedIssuer(sign(t, k2, jose.RS256, githubClaims(is.srv.URL, now))); err != nil || iss != is.srv.URL {
		t.Errorf("UnverifiedIssuer: %q %v", iss, err)
	}
}

// TestVerifyRefuses: every forged or unfit token is refused (ErrRefused):
// expired, not yet valid, another audience, another issuer, unsigned
// ("alg": "none"), signed with an HMAC of the issuer's public key, signed
// by a key the issuer does not publish, tampered with.
func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is, other := newIssuer(t), newIssuer(t)
	now := time.Now()
	k1, stranger := rsaKey(t, "k1"), rsaKey(t, "k9")
	is.publish(k1)
	other.publish(stranger)
	v := verifier(now)
	with := func(change func(map[string]any)) map[string]any {
		c := githubClaims(is.srv.URL, now)
		change(c)
		return c
	}
	pub, err := x509.MarshalPKIXPublicKey(k1.Public().Key)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	pubJWK, _ := json.Marshal(k1.Public())
	hmacOf := func(key []byte) func(string) []byte {
		return func(input string) []byte {
			m := hmac.New(sha256.New, key)
			m.Write([]byte(input))
			return m.Sum(nil)
		}
	}
	good := sign(t, k1, jose.RS256, githubClaims(is.srv.URL, now))
	tampered := good[:len(good)-4] + "AAAA"
	for _, c := range []struct{ name, tok, why string }{
		{"expired", sign(t, k1, jose.RS256, with(func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() })), "expired"},
		{"not yet valid", sign(t, k1, jose.RS256, with(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), "nbf"},
		{"another audience", sign(t, k1, jose.RS256, with(func(c map[string]any) { c["aud"] = "https://other.example.com" })), "audience"},
		{"another issuer", sign(t, k1, jose.RS256, with(func(c map[string]any) { c["iss"] = other.srv.URL })), "different provider"},
		{"alg none", forge(map[string]any{"alg": "none", "typ": "JWT"}, githubClaims(is.srv.URL, now), func(string) []byte { return nil }), `algorithm "none"`},
		{"HMAC with the public key (PEM)", forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}, githubClaims(is.srv.URL, now), hmacOf(pubPEM)), `algorithm "HS256"`},
		{"HMAC with the public key (JWK)", forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}, githubClaims(is.srv.URL, now), hmacOf(pubJWK)), `algorithm "HS256"`},
		{"a key the issuer does not publish", sign(t, stranger, jose.RS256, githubClaims(is.srv.URL, now)), "signature"},
		{"an unknown key id", sign(t, jose.JSONWebKey{Key: k1.Key, KeyID: "nope"}, jose.RS256, githubClaims(is.srv.URL, now)), "signature"},
		{"tampered", tampered, "signature"},
		{"not a JWT", "abc.def", "malformed"},
	} {
		claims, err := v.Verify(ctx, is.srv.URL, audience, c.tok)
		if !errors.Is(err, ciauth.ErrRefused) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %+v, %v; want refused (%s)", c.name, claims, err, c.why)
		}
	}
	if _, err := v.Verify(ctx, is.srv.URL, audience, good); err != nil {
		t.Errorf("the good token after the refusals: %v", err)
	}
}

// TestVerifyThroughEgress: the issuer's documents are fetched through the
// egress rules: with the deployed (strict) rules, an issuer on loopback is
// not reached, and that is the issuer's failure, not the token's.
func TestVerifyThroughEgress(t *testing.T) {
	t.Parallel()
	is := newIssuer(t)
	k1 := rsaKey(t, "k1")
	is.publish(k1)
	now := time.Now()
	v := ciauth.NewVerifier(egress.Policy{}.Client(5*time.Second), func() time.Time { return now })
	_, err := v.Verify(context.Background(), is.srv.URL, audience, sign(t, k1, jose.RS256, githubClaims(is.srv.URL, now)))
	if err == nil || errors.Is(err, ciauth.ErrRefused) || is.fetches.Load() != 0 {
		t.Errorf("%v after %d fetches of the keys; want an issuer's failure and none", err, is.fetches.Load())
	}
}
