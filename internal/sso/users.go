package sso

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// user is the person's user: the one an earlier sign-in of this issuer
// and subject created (refused when deactivated; its role moved to the
// mapped one, audited), or a new one without a password. A person is
// keyed by issuer and subject, never by e-mail address: an address can be
// reassigned or unverified at the provider, the subject cannot, so no
// person ever reaches another's user through an address (a new person
// whose address another user holds is refused, the address marker's rule).
func (s *Session) user(ctx context.Context, id identity, role scangate.Role, who scangate.Who) (scangate.User, error) {
	u, found, err := s.Store.SSOUser(ctx, s.Settings.Issuer, id.Subject)
	if err != nil {
		return scangate.User{}, err
	}
	if found {
		if !u.Active {
			return scangate.User{}, refuse(scangate.KindForbidden, id.Subject, "deactivated user",
				"your scangate user is deactivated; ask its admins")
		}
		if u.Role == role {
			return u, nil
		}
		now := scangate.At(s.Now())
		return s.Store.UpdateUser(ctx, u.ID, func(u *scangate.User) error {
			if !u.Active { // deactivated since it was read
				return refuse(scangate.KindForbidden, id.Subject, "deactivated user", "your scangate user is deactivated; ask its admins")
			}
			u.Role, u.UpdatedAt = role, now
			return nil
		}, who)
	}
	if id.Email == "" || id.Verified != nil && !*id.Verified || !scangate.ValidEmail(id.Email) {
		return scangate.User{}, refuse(scangate.KindForbidden, id.Subject, "no verified e-mail",
			"the provider gave no verified e-mail address for you, which a new scangate user needs")
	}
	now := scangate.At(s.Now())
	nu := scangate.User{Email: id.Email, EmailKey: s.Fold(id.Email), Role: role, Active: true, CreatedAt: now, UpdatedAt: now}
	if len(nu.EmailKey) > scangate.EmailKeyMax {
		return scangate.User{}, refuse(scangate.KindForbidden, id.Subject, "e-mail too long", "your e-mail address is too long for a scangate user")
	}
	names := []string{derivedUsername(s.Settings.Issuer, id.Subject)}
	if scangate.ValidUsername(id.Username) {
		names = append([]string{id.Username}, names...)
	}
	for i, name := range names {
		nu.Username = name
		created, err := s.Store.CreateSSOUser(ctx, nu, s.Settings.Issuer, id.Subject, who)
		var e *scangate.Error
		switch {
		case err == nil:
			return created, nil
		case errors.As(err, &e) && e.Kind == scangate.KindConflict && strings.HasPrefix(e.Detail, "the username") && i < len(names)-1:
			continue // the provider's username is another user's: the derived one
		case errors.As(err, &e) && e.Kind == scangate.KindConflict && strings.HasPrefix(e.Detail, "the e-mail"):
			return scangate.User{}, refuse(scangate.KindConflict, id.Subject, "e-mail taken",
				"another scangate user has your e-mail address; ask its admins to change that user's address")
		default:
			return scangate.User{}, err
		}
	}
	return scangate.User{}, errors.New("unreachable: the derived username is the last tried")
}

// derivedUsername is the username of a person whose provider gives none
// that a user may have (or another user's): "sso-" and 16 hex digits of
// the hash of issuer and subject.
func derivedUsername(issuer, subject string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return "sso-" + hex.EncodeToString(sum[:8])
}
