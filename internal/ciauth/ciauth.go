// Package ciauth verifies the OpenID Connect id tokens CI systems give
// their jobs (GitHub Actions' `id-token: write`, GitLab's `id_tokens`):
// signed with a key the issuer publishes (its discovery document's
// jwks_uri, fetched through the egress rules, cached, fetched again for a
// key id it does not know, so rotated keys are picked up), by that issuer,
// for the audience, unexpired and valid now. It uses go-oidc and go-jose
// (maintained, and what the CI vendors' own examples use) rather than
// parsing JOSE by hand.
package ciauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// ErrRefused marks an id token that does not verify: expired, not yet
// valid, for another audience, of another issuer, unsigned, signed with
// an algorithm or a key the issuer does not publish (401).
var ErrRefused = errors.New("id token refused")

// SigningAlgs are the algorithms an id token may be signed with: the
// asymmetric ones only, so that no token signed with an HMAC of the
// issuer's public key (or none at all, "alg": "none") is taken.
var SigningAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// FetchTimeout bounds a fetch of an issuer's discovery document or keys.
const FetchTimeout = 10 * time.Second

// Claims are what scangate reads of a verified id token.
type Claims struct {
	Issuer  string
	Subject string
	// Audience is every audience the token names (its aud claim).
	Audience []string
	Expiry   time.Time
	// RepoID is the id of the repository the job runs for: GitHub's
	// repository_id, GitLab's project_id ("" when the token names none).
	RepoID string
	// All are every claim of the token, as JSON decodes them (the
	// conditions of a trust are matched against them).
	All map[string]any
}

// Verifier verifies id tokens. Its issuers' discovery documents and keys
// are cached for the life of the execution environment.
type Verifier struct {
	client *http.Client
	now    func() time.Time
	mu     sync.Mutex
	issuer map[string]*IssuerVerifier
}

// NewVerifier returns a verifier that fetches issuers' documents and keys
// with client (egress.Policy.Client: the egress rules) and checks expiry
// against now.
func NewVerifier(client *http.Client, now func() time.Time) *Verifier {
	return &Verifier{client: client, now: now, issuer: map[string]*IssuerVerifier{}}
}

// verifier is the issuer's verifier: its discovery document read once,
// its keys cached.
func (v *Verifier) verifier(ctx context.Context, issuer string) (*IssuerVerifier, error) {
	v.mu.Lock()
	iv := v.issuer[issuer]
	v.mu.Unlock()
	if iv != nil {
		return iv, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), v.client), issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the issuer %s: %w", issuer, err)
	}
	// The audience is checked by VerifyAny, against every audience allowed.
	iv, err = NewIssuerVerifier(ctx, v.client, p, &oidc.Config{SkipClientIDCheck: true, SupportedSigningAlgs: SigningAlgs, Now: v.now})
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.issuer[issuer] = iv
	v.mu.Unlock()
	return iv, nil
}

// IssuerVerifier verifies the id tokens of one issuer (go-oidc's verifier)
// and tells a token that does not verify from keys that could not be
// fetched: go-oidc reports both as "failed to verify signature".
type IssuerVerifier struct {
	v *oidc.IDTokenVerifier
}

// NewIssuerVerifier returns the verifier of p's id tokens under config,
// whose keys (p's jwks_uri: cached, fetched again for a key id it does
// not know) are fetched with client.
func NewIssuerVerifier(ctx context.Context, client *http.Client, p *oidc.Provider, config *oidc.Config) (*IssuerVerifier, error) {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKSURI == "" {
		return nil, fmt.Errorf("the issuer's discovery document names no jwks_uri (%v)", err)
	}
	// The key set keeps the context it is made with for its later
	// fetches: the client, without the request's cancellation.
	keys := keySet{remote: oidc.NewRemoteKeySet(oidc.ClientContext(context.WithoutCancel(ctx), client), doc.JWKSURI)}
	return &IssuerVerifier{v: oidc.NewVerifier(doc.Issuer, keys, config)}, nil
}

// Verify checks raw. An error that wraps ErrRefused is the token's fault;
// another is the issuer's (its keys could not be fetched).
func (iv *IssuerVerifier) Verify(ctx context.Context, raw string) (*oidc.IDToken, error) {
	failed := &fetchFailure{}
	tok, err := iv.v.Verify(context.WithValue(ctx, fetchFailureKey{}, failed), raw)
	switch {
	case err == nil:
		return tok, nil
	case failed.err != nil:
		return nil, fmt.Errorf("fetch the issuer's keys: %w", failed.err)
	default:
		return nil, fmt.Errorf("%w: %s", ErrRefused, err.Error())
	}
}

// keySet is go-oidc's remote key set, recording in the call's context a
// failure to fetch the keys (which go-oidc's verifier formats into its
// error, losing it).
type keySet struct {
	remote *oidc.RemoteKeySet
}

type fetchFailureKey struct{}

type fetchFailure struct{ err error }

func (k keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.remote.VerifySignature(ctx, jwt)
	// RemoteKeySet wraps (%w) only the error of a fetch of the keys (or
	// the call's context ending while it waits for one); a signature no
	// key verifies, or a malformed token, is an error of its own.
	if err != nil && errors.Unwrap(err) != nil {
		if f, ok := ctx.Value(fetchFailureKey{}).(*fetchFailure); ok {
			f.err = err
		}
	}
	return payload, err
}

// Verify checks raw as an id token of issuer for audience. An error that
// wraps ErrRefused is the token's fault; another is the issuer's (its
// documents could not be fetched).
func (v *Verifier) Verify(ctx context.Context, issuer, audience, raw string) (Claims, error) {
	return v.VerifyAny(ctx, issuer, []string{audience}, raw)
}

// VerifyAny checks raw as an id token of issuer for at least one of
// audiences (the trusts of one issuer may each name their own): its
// signature, issuer and times as Verify does, then its aud claim against
// the list. Errors as Verify's.
func (v *Verifier) VerifyAny(ctx context.Context, issuer string, audiences []string, raw string) (Claims, error) {
	iv, err := v.verifier(ctx, issuer)
	if err != nil {
		return Claims{}, err
	}
	tok, err := iv.Verify(ctx, raw)
	if err != nil {
		return Claims{}, err
	}
	if !slices.ContainsFunc(tok.Audience, func(a string) bool { return slices.Contains(audiences, a) }) {
		return Claims{}, fmt.Errorf("%w: expected audience in %q got %q", ErrRefused, audiences, tok.Audience)
	}
	c := Claims{Issuer: tok.Issuer, Subject: tok.Subject, Audience: tok.Audience, Expiry: tok.Expiry}
	if err := tok.Claims(&c.All); err != nil {
		return Claims{}, fmt.Errorf("%w: its claims: %s", ErrRefused, err.Error())
	}
	for _, name := range []string{"repository_id", "project_id"} {
		if s, ok := c.All[name].(string); ok && s != "" {
			c.RepoID = s
			break
		}
	}
	return c, nil
}

// UnverifiedIssuer reads the iss claim of raw without verifying anything:
// only to choose whose keys to verify it with.
func UnverifiedIssuer(raw string) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("%w: not a signed JWT", ErrRefused)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("%w: its payload is not base64url", ErrRefused)
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Iss == "" {
		return "", fmt.Errorf("%w: no issuer", ErrRefused)
	}
	return c.Iss, nil
}
