package auth

import (
	"context"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// PersonalTokenStore stores personal tokens.
type PersonalTokenStore interface {
	TokenID(ctx context.Context) (int64, error)
	CreatePersonalToken(ctx context.Context, t scangate.Token, fold func(string) string, who scangate.Who) error
}

// PersonalTokens issues personal tokens, for CI jobs and dashboards, the
// same way through the API and the admin CLI.
type PersonalTokens struct {
	Store PersonalTokenStore
	Now   func() time.Time
	// Fold is the form under which a user's token names are unique:
	// internal/emailfold.Fold, as for e-mail addresses (handed in so that this
	// package does not link it).
	Fold func(string) string
}

// Create issues a personal token to a user: it returns the token (the
// secret, to be shown once and never again) and what is stored of it.
// The request must be valid (scangate.NewToken.Validate).
func (p PersonalTokens) Create(ctx context.Context, userID int64, nt scangate.NewToken, who scangate.Who) (string, scangate.Token, error) {
	id, err := p.Store.TokenID(ctx)
	if err != nil {
		return "", scangate.Token{}, err
	}
	secret, err := NewToken(userID)
	if err != nil {
		return "", scangate.Token{}, err
	}
	now := scangate.At(p.Now()).Time
	t := scangate.Token{ID: id, Hash: HashToken(secret), UserID: userID, Kind: scangate.TokenPersonal, Name: nt.Name,
		Scope: nt.Scope, Repos: nt.Repos, CreatedAt: now, ExpiresAt: now.Add(time.Duration(nt.Days) * 24 * time.Hour)}
	if err := p.Store.CreatePersonalToken(ctx, t, p.Fold, who); err != nil {
		return "", scangate.Token{}, err
	}
	return secret, t, nil
}
