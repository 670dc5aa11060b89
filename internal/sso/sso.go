// Package sso signs people in to the dashboard through the organisation's
// OpenID Connect provider: the dashboard sends the person to the
// provider with an authorization request (code, PKCE S256, state and
// nonce), checks the state when the provider sends the person back, and
// posts the code, its PKCE verifier, the redirect URI and the nonce to
// POST /auth/oidc/session. There the code is exchanged at the provider's
// token endpoint with the client's secret (which only the server holds),
// the id token is verified (signature with the issuer's published keys,
// issuer, audience, expiry, nonce), a configured claim is mapped to a role,
// and a session token like a login's is issued. go-oidc verifies the id
// token and golang.org/x/oauth2 makes the exchange (both maintained, and
// what the provider vendors' own Go examples use).
package sso

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/ciauth"
	"github.com/scangate/scangate/internal/scangate"
)

// DefaultClaim is the claim mapped to roles when none is configured.
const DefaultClaim = "groups"

// MaxSessionTTL is the longest a session of single sign-on lives: the
// provider is asked again at least every hour, so that a person removed
// there is out of scangate within the hour.
const MaxSessionTTL = time.Hour

// Mapping maps the values of the configured claim (group names) to roles:
// {"admins":[...],"users":[...],"readonly":[...]}. A person in groups of
// several roles gets the highest.
type Mapping struct {
	Admins   []string `json:"admins"`
	Users    []string `json:"users"`
	Readonly []string `json:"readonly"`
}

// ParseMapping reads a mapping from its JSON; it must name at least one
// group, and no group may be empty.
func ParseMapping(s string) (Mapping, error) {
	var m Mapping
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return Mapping{}, fmt.Errorf(`the role mapping is not {"admins":[...],"users":[...],"readonly":[...]}: %w`, err)
	}
	all := slices.Concat(m.Admins, m.Users, m.Readonly)
	if len(all) == 0 {
		return Mapping{}, errors.New("the role mapping names no group")
	}
	if slices.Contains(all, "") {
		return Mapping{}, errors.New("the role mapping names an empty group")
	}
	return m, nil
}

// Role is the highest role whose groups hold one of groups; false when
// none does.
func (m Mapping) Role(groups []string) (scangate.Role, bool) {
	in := func(names []string) bool {
		return slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(names, g) })
	}
	switch {
	case in(m.Admins):
		return scangate.RoleAdmin, true
	case in(m.Users):
		return scangate.RoleUser, true
	case in(m.Readonly):
		return scangate.RoleReadonly, true
	}
	return "", false
}

// Settings are a deployment's single sign-on.
type Settings struct {
	Issuer   string // the provider's issuer URL (its discovery document is at /.well-known/openid-configuration)
	ClientID string // scangate's client at the provider
	Claim    string // the claim mapped to roles (DefaultClaim when empty)
	Roles    Mapping
}

// Enabled reports whether single sign-on is configured.
func (s Settings) Enabled() bool { return s.Issuer != "" }

// Store is what signing in reads and writes.
type Store interface {
	SSOUser(ctx context.Context, issuer, subject string) (scangate.User, bool, error)
	CreateSSOUser(ctx context.Context, u scangate.User, issuer, subject string, who scangate.Who) (scangate.User, error)
	UpdateUser(ctx context.Context, id int64, change func(*scangate.User) error, who scangate.Who) (scangate.User, error)
	TokenID(ctx context.Context) (int64, error)
	SSOSignedIn(ctx context.Context, tok scangate.Token, subject string, who scangate.Who) error
	AuditSSORefused(ctx context.Context, e scangate.AuditEntry) error
}

// Request is what the dashboard posts after the provider sent the person
// back.
type Request = auth.SSORequest

// Session signs people in.
type Session struct {
	Settings Settings
	// Secret reads the client's secret (from Secrets Manager, when first
	// needed).
	Secret func(context.Context) (string, error)
	// HTTP fetches the provider's documents and keys and makes the
	// exchange (egress.Policy's client: the outbound rules).
	HTTP  *http.Client
	Store Store
	Fold  func(string) string // folds e-mail addresses (internal/emailfold)
	TTL   time.Duration       // the session's lifetime, at most MaxSessionTTL
	Now   func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *ciauth.IssuerVerifier
	broken   error // the configuration's error (New)
}

// discover reads the issuer's discovery document once per execution
// environment (go-oidc's key set then fetches the keys, again for a key id
// it does not know: rotated keys are picked up).
func (s *Session) discover(ctx context.Context) (*oidc.Provider, *ciauth.IssuerVerifier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider != nil {
		return s.provider, s.verifier, nil
	}
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), s.HTTP), s.Settings.Issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("discover the issuer %s: %w", s.Settings.Issuer, err)
	}
	v, err := ciauth.NewIssuerVerifier(ctx, s.HTTP, p, &oidc.Config{ClientID: s.Settings.ClientID, SupportedSigningAlgs: ciauth.SigningAlgs, Now: s.Now})
	if err != nil {
		return nil, nil, fmt.Errorf("the issuer %s: %w", s.Settings.Issuer, err)
	}
	s.provider, s.verifier = p, v
	return p, v, nil
}

// identity is what is read of a verified id token.
type identity struct {
	Subject  string
	Email    string
	Verified *bool
	Username string
	Groups   []string
}

// refusal is a sign-in refused for the person's or the request's fault:
// audited, answered with kind.
type refusal struct {
	kind    scangate.Kind
	reason  string // in the audit entry
	detail  string // in the answer
	subject string
}

func (r *refusal) Error() string { return r.detail }

func refuse(kind scangate.Kind, subject, reason, detail string) *refusal {
	return &refusal{kind: kind, reason: reason, detail: detail, subject: subject}
}

// SignIn exchanges the request's code, verifies the id token, finds or
// creates the person's user with the role the claim maps to, and issues a
// session token. Every refusal is audited (sso.refused) and answered 401
// (the code, the id token or the nonce) or 403 (no mapped group, a
// deactivated user); who tells the request.
func (s *Session) SignIn(ctx context.Context, r Request, who scangate.Who) (auth.Issued, error) {
	if s.broken != nil {
		return auth.Issued{}, fmt.Errorf("single sign-on's configuration: %w", s.broken)
	}
	if !s.Settings.Enabled() {
		return auth.Issued{}, scangate.Errorf(scangate.KindNotFound, "single sign-on is not configured in this deployment")
	}
	issued, err := s.signIn(ctx, r, who)
	var ref *refusal
	if errors.As(err, &ref) {
		c := scangate.Changes{}
		c.Set("reason", nil, ref.reason)
		subject := ref.subject
		if subject == "" {
			subject = "unknown"
		}
		e := scangate.NewAudit(scangate.AuditSSORefused, who, scangate.Target{Type: "sso_subject", ID: subject}, c, s.Now())
		if aerr := s.Store.AuditSSORefused(ctx, e); aerr != nil {
			return auth.Issued{}, fmt.Errorf("audit a refused sign-in: %w", aerr)
		}
		return auth.Issued{}, scangate.Errorf(ref.kind, "%s", ref.detail)
	}
	return issued, err
}

func (s *Session) signIn(ctx context.Context, r Request, who scangate.Who) (auth.Issued, error) {
	id, err := s.verify(ctx, r)
	if err != nil {
		return auth.Issued{}, err
	}
	role, ok := s.Settings.Roles.Role(id.Groups)
	if !ok {
		return auth.Issued{}, refuse(scangate.KindForbidden, id.Subject, "no mapped group",
			"you are in none of the groups this deployment maps to a role; ask its admins")
	}
	u, err := s.user(ctx, id, role, who)
	if err != nil {
		return auth.Issued{}, err
	}
	now := s.Now()
	tokenID, err := s.Store.TokenID(ctx)
	if err != nil {
		return auth.Issued{}, err
	}
	token, err := auth.NewToken(u.ID)
	if err != nil {
		return auth.Issued{}, err
	}
	ttl := min(s.TTL, MaxSessionTTL)
	t := scangate.Token{ID: tokenID, Hash: auth.HashToken(token), UserID: u.ID, Kind: scangate.TokenLogin, Scope: scangate.ScopeWrite,
		CreatedAt: now, ExpiresAt: now.Add(ttl)}
	who.Actor = &scangate.Actor{UserID: u.ID, Username: u.Username, TokenID: tokenID}
	if err := s.Store.SSOSignedIn(ctx, t, id.Subject, who); err != nil {
		return auth.Issued{}, err
	}
	return auth.Issued{Token: token, ID: tokenID, ExpiresIn: ttl}, nil
}

// verify exchanges the code and verifies the id token it answers.
func (s *Session) verify(ctx context.Context, r Request) (identity, error) {
	p, v, err := s.discover(ctx)
	if err != nil {
		return identity{}, err
	}
	secret, err := s.Secret(ctx)
	if err != nil {
		return identity{}, fmt.Errorf("the client's secret: %w", err)
	}
	conf := oauth2.Config{ClientID: s.Settings.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(), RedirectURL: r.RedirectURI,
		Scopes: []string{oidc.ScopeOpenID}}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, s.HTTP)
	tok, err := conf.Exchange(hctx, r.Code, oauth2.VerifierOption(r.CodeVerifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return identity{}, refuse(scangate.KindUnauthorized, "", "code refused: "+re.ErrorCode,
				"the provider refused the code (expired, used, or not issued for this verifier and redirect URI): sign in again")
		}
		return identity{}, fmt.Errorf("exchange the code at %s: %w", p.Endpoint().TokenURL, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, refuse(scangate.KindUnauthorized, "", "no id token", "the provider answered no id token: is the openid scope granted?")
	}
	idt, err := v.Verify(ctx, raw)
	switch {
	case errors.Is(err, ciauth.ErrRefused):
		return identity{}, refuse(scangate.KindUnauthorized, "", "id token refused: "+strings.TrimPrefix(err.Error(), ciauth.ErrRefused.Error()+": "),
			"the id token does not verify: sign in again")
	case err != nil: // the provider's keys could not be fetched: not the person's fault
		return identity{}, scangate.Errorf(scangate.KindUnavailable, "the provider's keys could not be read; try again: %s", err.Error())
	}
	if r.Nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(r.Nonce)) != 1 {
		return identity{}, refuse(scangate.KindUnauthorized, idt.Subject, "nonce mismatch",
			"the id token is not the answer to this sign-in (its nonce differs): sign in again")
	}
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return identity{}, refuse(scangate.KindUnauthorized, idt.Subject, "claims unreadable", "the id token's claims are unreadable")
	}
	id := identity{Subject: idt.Subject, Groups: strs(all[s.claim()])}
	id.Email, _ = all["email"].(string)
	id.Username, _ = all["preferred_username"].(string)
	if b, ok := all["email_verified"].(bool); ok {
		id.Verified = &b
	}
	return id, nil
}

func (s *Session) claim() string {
	if s.Settings.Claim == "" {
		return DefaultClaim
	}
	return s.Settings.Claim
}

// strs reads a claim that is a list of strings or one string.
func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
