package ciauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/ciauth"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/oidctest"
)

const audience = "https://scangate.example.com"

func githubClaims(iss string, now time.Time) map[string]any {
	return oidctest.GitHubClaims(iss, audience, "4242", now)
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
	is := oidctest.New(t)
	now := time.Now()
	k1, k2 := oidctest.RSAKey(t, "k1"), oidctest.RSAKey(t, "k2")
	is.Publish(k1)
	v := verifier(now)
	c, err := v.Verify(ctx, is.URL, audience, oidctest.Sign(t, k1, jose.RS256, githubClaims(is.URL, now)))
	if err != nil || c.RepoID != "4242" || c.Subject != "repo:acme/api:ref:refs/heads/main" || c.All["ref"] != "refs/heads/main" {
		t.Fatalf("claims %+v, %v", c, err)
	}
	gitlab := githubClaims(is.URL, now)
	delete(gitlab, "repository_id")
	gitlab["project_id"] = "77"
	if c, err := v.Verify(ctx, is.URL, audience, oidctest.Sign(t, k1, jose.RS256, gitlab)); err != nil || c.RepoID != "77" {
		t.Fatalf("GitLab's claims %+v, %v", c, err)
	}
	// An ECDSA key too.
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec := jose.JSONWebKey{Key: ek, KeyID: "e1", Algorithm: "ES256", Use: "sig"}
	// Rotation: the issuer now publishes k2 and e1; a token of k2 verifies.
	before := is.Fetches()
	is.Publish(k2, ec)
	if _, err := v.Verify(ctx, is.URL, audience, oidctest.Sign(t, k2, jose.RS256, githubClaims(is.URL, now))); err != nil {
		t.Fatalf("a rotated key: %v", err)
	}
	if is.Fetches() == before {
		t.Errorf("a key id it did not know verified without fetching the keys again")
	}
	if _, err := v.Verify(ctx, is.URL, audience, oidctest.Sign(t, ec, jose.ES256, githubClaims(is.URL, now))); err != nil {
		t.Fatalf("an ECDSA key: %v", err)
	}
	// Any of several audiences (the trusts of one issuer each name theirs).
	if c, err := v.VerifyAny(ctx, is.URL, []string{"https://other.example.com", audience}, oidctest.Sign(t, k2, jose.RS256, githubClaims(is.URL, now))); err != nil || len(c.Audience) != 1 || c.Audience[0] != audience {
		t.Errorf("VerifyAny: %+v, %v", c, err)
	}
	if _, err := v.VerifyAny(ctx, is.URL, []string{"https://other.example.com"}, oidctest.Sign(t, k2, jose.RS256, githubClaims(is.URL, now))); !errors.Is(err, ciauth.ErrRefused) {
		t.Errorf("VerifyAny of another audience: %v", err)
	}
	if iss, err := ciauth.UnverifiedIssuer(oidctest.Sign(t, k2, jose.RS256, githubClaims(is.URL, now))); err != nil || iss != is.URL {
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
	is, other := oidctest.New(t), oidctest.New(t)
	now := time.Now()
	k1, stranger := oidctest.RSAKey(t, "k1"), oidctest.RSAKey(t, "k9")
	is.Publish(k1)
	other.Publish(stranger)
	v := verifier(now)
	with := func(change func(map[string]any)) map[string]any {
		c := githubClaims(is.URL, now)
		change(c)
		return c
	}
	pubPEM := oidctest.PublicPEM(t, k1)
	pubJWK, _ := json.Marshal(k1.Public())
	hmacOf := oidctest.HS256
	good := oidctest.Sign(t, k1, jose.RS256, githubClaims(is.URL, now))
	tampered := good[:len(good)-4] + "AAAA"
	for _, c := range []struct{ name, tok, why string }{
		{"expired", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() })), "expired"},
		{"not yet valid", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), "nbf"},
		{"another audience", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["aud"] = "https://other.example.com" })), "audience"},
		{"another issuer", oidctest.Sign(t, k1, jose.RS256, with(func(c map[string]any) { c["iss"] = other.URL })), "different provider"},
		{"alg none", oidctest.Forge(map[string]any{"alg": "none", "typ": "JWT"}, githubClaims(is.URL, now), func(string) []byte { return nil }), `algorithm "none"`},
		{"HMAC with the public key (PEM)", oidctest.Forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}, githubClaims(is.URL, now), hmacOf(pubPEM)), `algorithm "HS256"`},
		{"HMAC with the public key (JWK)", oidctest.Forge(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"}, githubClaims(is.URL, now), hmacOf(pubJWK)), `algorithm "HS256"`},
		{"a key the issuer does not publish", oidctest.Sign(t, stranger, jose.RS256, githubClaims(is.URL, now)), "signature"},
		{"an unknown key id", oidctest.Sign(t, jose.JSONWebKey{Key: k1.Key, KeyID: "nope"}, jose.RS256, githubClaims(is.URL, now)), "signature"},
		{"tampered", tampered, "signature"},
		{"not a JWT", "abc.def", "malformed"},
	} {
		claims, err := v.Verify(ctx, is.URL, audience, c.tok)
		if !errors.Is(err, ciauth.ErrRefused) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %+v, %v; want refused (%s)", c.name, claims, err, c.why)
		}
	}
	if _, err := v.Verify(ctx, is.URL, audience, good); err != nil {
		t.Errorf("the good token after the refusals: %v", err)
	}
}

// TestVerifyThroughEgress: the issuer's documents are fetched through the
// egress rules: with the deployed (strict) rules, an issuer on loopback is
// not reached, and that is the issuer's failure, not the token's.
func TestVerifyThroughEgress(t *testing.T) {
	t.Parallel()
	is := oidctest.New(t)
	k1 := oidctest.RSAKey(t, "k1")
	is.Publish(k1)
	now := time.Now()
	v := ciauth.NewVerifier(egress.Policy{}.Client(5*time.Second), func() time.Time { return now })
	_, err := v.Verify(context.Background(), is.URL, audience, oidctest.Sign(t, k1, jose.RS256, githubClaims(is.URL, now)))
	if err == nil || errors.Is(err, ciauth.ErrRefused) || is.Fetches() != 0 {
		t.Errorf("%v after %d fetches of the keys; want an issuer's failure and none", err, is.Fetches())
	}
}

// TestVerifyKeysUnreachable: when the issuer's keys cannot be fetched (its
// jwks_uri answers 500), the real verifier's error is the issuer's, not
// the token's (not ErrRefused: 503 at the API, no refusal audited), and
// once the keys are served again the same token verifies.
func TestVerifyKeysUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := oidctest.New(t)
	now := time.Now()
	k1 := oidctest.RSAKey(t, "k1")
	is.Publish(k1)
	is.FailKeys(true)
	v := verifier(now)
	good := oidctest.Sign(t, k1, jose.RS256, githubClaims(is.URL, now))
	if _, err := v.Verify(ctx, is.URL, audience, good); err == nil || errors.Is(err, ciauth.ErrRefused) {
		t.Fatalf("keys unreachable: %v; want an error that is not a refusal", err)
	}
	is.FailKeys(false)
	if _, err := v.Verify(ctx, is.URL, audience, good); err != nil {
		t.Fatalf("keys served again: %v", err)
	}
	// A token the served keys do not verify is refused again.
	if _, err := v.Verify(ctx, is.URL, audience, good[:len(good)-4]+"AAAA"); !errors.Is(err, ciauth.ErrRefused) {
		t.Errorf("tampered, keys served: %v; want refused", err)
	}
}
