package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/scangate/scangate/internal/scangate"
)

// ssoKey is the marker of a person of the organisation's OpenID provider:
// the issuer and the subject (the provider's stable id of the person),
// hashed so that a long pair still fits a key. It names the user that
// signing in as that person reaches.
func ssoKey(issuer, subject string) item {
	sum := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return key("SSO#"+hex.EncodeToString(sum[:]), "SSO")
}

// Label of the single sign-on marker in a user's creation.
const lSSO = "sso"

// SSOUser reads the user that the person subject of issuer signed in as
// before (false when none has): the marker, then the user, both strongly
// consistent.
func (s *Store) SSOUser(ctx context.Context, issuer, subject string) (scangate.User, bool, error) {
	it, err := s.getItem(ctx, "get sso marker", ssoKey(issuer, subject))
	if err != nil || it == nil {
		return scangate.User{}, false, err
	}
	u, err := s.User(ctx, getN(it, aUserID))
	return u, err == nil, err
}

// CreateSSOUser stores the user of a person's first single sign-on, as
// CreateUser does (its username and e-mail markers hold, so that an
// address taken by another user is a conflict) with the person's marker
// in the same transaction: two people of one issuer never share a user,
// and two first sign-ins of one person at once make one user (the other
// is a conflict).
func (s *Store) CreateSSOUser(ctx context.Context, u scangate.User, issuer, subject string, who scangate.Who) (scangate.User, error) {
	return s.createUserWith(ctx, u, who, func(t *tx, id int64) {
		putMarker(t, lSSO, ssoKey(issuer, subject), id, nil)
	})
}

// SSOSignedIn stores the session token of a single sign-on with its audit
// entries (the token's, and the sign-in's naming the subject and role):
// one round trip.
func (s *Store) SSOSignedIn(ctx context.Context, tok scangate.Token, subject string, who scangate.Who) error {
	t := s.newTx()
	s.putToken(t, tok, who)
	c := scangate.Changes{}
	c.Set("user_id", nil, tok.UserID)
	s.addAudit(t, scangate.NewAudit(scangate.AuditSSOSignIn, who, scangate.Target{Type: "sso_subject", ID: subject}, c, tok.CreatedAt))
	return s.commit(ctx, "sso sign-in", t)
}

// AuditSSORefused records a refused single sign-on (among the failed
// logins: unauthenticated traffic).
func (s *Store) AuditSSORefused(ctx context.Context, e scangate.AuditEntry) error {
	t := s.newTx()
	s.addAudit(t, e)
	return s.commit(ctx, "audit sso refusal", t)
}
