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
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// ErrRefused marks an id token that does not verify: expired, not yet
// valid, for another audience, of another issuer, unsigned, signed with
// an algorithm or a key the issuer does not publish (401).
var ErrRefused = errors.New("id token refused")

// signingAlgs are the algorithms an id token may be signed with: the
// asymmetric ones only, so that no token signed with an HMAC of the
// issuer's public key (or none at all, "alg": "none") is taken.
var signingAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// Claims are what scangate reads of a verified id token.
type Claims struct {
	Issuer  string
	Subject string
	Expiry  time.Time
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
	issuer map[string]*oidc.Provider
}

// NewVerifier returns a verifier that fetches issuers' documents and keys
// with client (egress.Policy.Client: the egress rules) and checks expiry
// against now.
func NewVerifier(client *http.Client, now func() time.Time) *Verifier {
	return &Verifier{client: client, now: now, issuer: map[string]*oidc.Provider{}}
}

// provider is the issuer's discovery document and key set, read once.
func (v *Verifier) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	v.mu.Lock()
	p := v.issuer[issuer]
	v.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// The key set keeps the context it is made with for its later
	// fetches: the client, without the request's cancellation.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), v.client), issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the issuer %s: %w", issuer, err)
	}
	v.mu.Lock()
	v.issuer[issuer] = p
	v.mu.Unlock()
	return p, nil
}

// Verify checks raw as an id token of issuer for audience. An error that
// wraps ErrRefused is the token's fault; another is the issuer's (its
// documents could not be fetched).
func (v *Verifier) Verify(ctx context.Context, issuer, audience, raw string) (Claims, error) {
	p, err := v.provider(ctx, issuer)
	if err != nil {
		return Claims{}, err
	}
	tok, err := p.VerifierContext(oidc.ClientContext(ctx, v.client), &oidc.Config{ClientID: audience, SupportedSigningAlgs: signingAlgs, Now: v.now}).Verify(ctx, raw)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %s", ErrRefused, err.Error())
	}
	c := Claims{Issuer: tok.Issuer, Subject: tok.Subject, Expiry: tok.Expiry}
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
