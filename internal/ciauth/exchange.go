package ciauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

// ExchangeStore is what an exchange reads and writes: the trusts of an
// issuer, the owner of the token it issues, the token's id, the token
// (with its audit entry) and the audit entry of a refusal.
type ExchangeStore interface {
	Trusts(ctx context.Context, issuer string) ([]scangate.Trust, error)
	User(ctx context.Context, id int64) (scangate.User, error)
	TokenID(ctx context.Context) (int64, error)
	IssueCIToken(ctx context.Context, tok scangate.Token, trust, subject string, who scangate.Who) error
	RefuseIDToken(ctx context.Context, target scangate.Target, changes scangate.Changes, who scangate.Who, now time.Time) error
}

// IDTokenVerifier verifies an id token of an issuer for any of audiences
// (*Verifier).
type IDTokenVerifier interface {
	VerifyAny(ctx context.Context, issuer string, audiences []string, raw string) (Claims, error)
}

// Exchange turns a CI job's id token into a scan token of the repository
// its claims name, when a trust lets it in (POST /auth/oidc/token).
type Exchange struct {
	Store    ExchangeStore
	Verifier IDTokenVerifier
	Now      func() time.Time
}

// untrustedIssuer is the audit target's id of an issuer no trust names:
// the token's own iss is not written down (anyone may send anything).
const untrustedIssuer = "untrusted"

// refusal is why an id token is not exchanged: what the audit entry says
// (reason, and the trust and claims when known) and what the caller is
// told (detail).
type refusal struct {
	target scangate.Target
	detail string
	reason string
	trust  string
	claims *Claims
}

// Exchange verifies raw and issues the token. The issuer's keys are
// fetched only for an issuer some trust names. An id token refused for
// whatever reason is a 401 (KindUnauthorized) with an audit entry
// oidc.token.refused; an issuer whose keys cannot be fetched is a 503.
// who tells the request (its id and source address).
func (x Exchange) Exchange(ctx context.Context, raw string, who scangate.Who) (auth.Issued, error) {
	now := x.Now()
	issued, r, err := x.exchange(ctx, raw, who, now)
	if err != nil || r == nil {
		return issued, err
	}
	changes := scangate.Changes{}
	changes.Set("reason", nil, clip(r.reason))
	if r.trust != "" {
		changes.Set("trust", nil, r.trust)
	}
	if r.claims != nil {
		changes.Set("subject", nil, clip(r.claims.Subject))
		if r.claims.RepoID != "" {
			changes.Set("repository_id", nil, clip(r.claims.RepoID))
		}
	}
	if err := x.Store.RefuseIDToken(ctx, r.target, changes, who, now); err != nil {
		return auth.Issued{}, err
	}
	return auth.Issued{}, scangate.Errorf(scangate.KindUnauthorized, "the id token is refused: %s", r.detail)
}

// exchange issues the token, or says why not (a refusal), or fails.
func (x Exchange) exchange(ctx context.Context, raw string, who scangate.Who, now time.Time) (auth.Issued, *refusal, error) {
	untrusted := scangate.Target{Type: "oidc_issuer", ID: untrustedIssuer}
	issuer, err := UnverifiedIssuer(raw)
	if err != nil {
		return auth.Issued{}, &refusal{target: untrusted, detail: "it is not a signed JWT naming its issuer", reason: err.Error()}, nil
	}
	trusts, err := x.Store.Trusts(ctx, issuer)
	if err != nil {
		return auth.Issued{}, nil, err
	}
	if len(trusts) == 0 {
		return auth.Issued{}, &refusal{target: untrusted, detail: "no trust names its issuer", reason: "no trust names the issuer"}, nil
	}
	target := scangate.Target{Type: "oidc_issuer", ID: issuer}
	var audiences []string
	for _, t := range trusts {
		if !slices.Contains(audiences, t.Audience) {
			audiences = append(audiences, t.Audience)
		}
	}
	claims, err := x.Verifier.VerifyAny(ctx, issuer, audiences, raw)
	switch {
	case errors.Is(err, ErrRefused):
		return auth.Issued{}, &refusal{target: target, detail: "it does not verify: " + strings.TrimPrefix(err.Error(), ErrRefused.Error()+": "), reason: err.Error()}, nil
	case err != nil:
		return auth.Issued{}, nil, scangate.Errorf(scangate.KindUnavailable, "the keys of the id token's issuer could not be read; try again: %s", err.Error())
	}
	// The first trust, by name, for the token's audience that lets it in.
	var why []string
	for _, t := range trusts {
		if !slices.Contains(claims.Audience, t.Audience) {
			continue
		}
		repo, err := t.Match(claims.RepoID, claims.All)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		return x.issue(ctx, t, repo, claims, who, now)
	}
	return auth.Issued{}, &refusal{target: target, detail: "no trust lets it in (its repository or its claims)", reason: strings.Join(why, "; "), claims: &claims}, nil
}

// issue issues the scan token of repo to the trust's owner (the admin
// who last put it), for at most MaxCITokenLifetime and never past the id
// token's expiry.
func (x Exchange) issue(ctx context.Context, t scangate.Trust, repo scangate.RepoRef, claims Claims, who scangate.Who, now time.Time) (auth.Issued, *refusal, error) {
	owner, err := x.Store.User(ctx, t.UpdatedBy)
	if err != nil && scangate.KindOf(err) != scangate.KindNotFound {
		return auth.Issued{}, nil, err
	}
	if err != nil || !owner.Active || (owner.Role != scangate.RoleAdmin && owner.Role != scangate.RoleUser) {
		return auth.Issued{}, &refusal{target: scangate.Target{Type: "oidc_issuer", ID: t.Issuer}, trust: t.Name, claims: &claims,
			detail: "the trust's owner may not record scans; an admin must put the trust again",
			reason: fmt.Sprintf("the trust's owner, user %d, is not an active admin or user", t.UpdatedBy)}, nil
	}
	id, err := x.Store.TokenID(ctx)
	if err != nil {
		return auth.Issued{}, nil, err
	}
	secret, err := auth.NewToken(owner.ID)
	if err != nil {
		return auth.Issued{}, nil, err
	}
	created := scangate.At(now).Time
	expires := created.Add(scangate.MaxCITokenLifetime)
	if claims.Expiry.Before(expires) {
		expires = claims.Expiry
	}
	tok := scangate.Token{ID: id, Hash: auth.HashToken(secret), UserID: owner.ID, Kind: scangate.TokenCI, Name: t.Name,
		Scope: scangate.ScopeScan, Repos: []scangate.RepoRef{repo}, CreatedAt: created, ExpiresAt: expires}
	who.Actor = &scangate.Actor{UserID: owner.ID, Username: owner.Username, TokenID: id}
	if err := x.Store.IssueCIToken(ctx, tok, t.Name, clip(claims.Subject), who); err != nil {
		return auth.Issued{}, nil, err
	}
	return auth.Issued{Token: secret, ID: id, ExpiresIn: expires.Sub(created), Repos: tok.Repos}, nil, nil
}

// clip makes a value of the token fit for the audit log: at most 256
// characters, control and format characters replaced.
func clip(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '?'
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > 256 {
		s = string([]rune(s)[:256]) + "…"
	}
	return s
}
