package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/scangate/scangate/pkg/scangate"
)

// Login throttling: once a username has MaxFailures failed logins within
// FailureWindow, every login for it answers 429 until the window passes.
const (
	MaxFailures   = 5
	FailureWindow = 15 * time.Minute
)

// LoginStore is what logging in reads and writes.
type LoginStore interface {
	LoginLookup(ctx context.Context, username string) (*scangate.User, scangate.LoginFailures, error)
	LoginFailures(ctx context.Context, username string) (scangate.LoginFailures, error)
	SaveLoginFailures(ctx context.Context, username string, prev scangate.LoginFailures, times []time.Time, expires time.Time) (bool, error)
	PutToken(ctx context.Context, t scangate.Token) error
}

// Login exchanges a username and password for a bearer token.
type Login struct {
	Store    LoginStore
	TokenTTL time.Duration
	Now      func() time.Time
}

// Issued is a new token and how long it lives.
type Issued struct {
	Token     string
	ExpiresIn time.Duration
}

// Login checks the password and issues a token. Unknown usernames, wrong
// passwords and inactive users get the same 401 after the same work. A
// username that no user can have (scangate.ValidUsername) gets that 401
// at once: it is neither read nor counted, so it never reaches a key.
func (l Login) Login(ctx context.Context, username, password string) (Issued, error) {
	if !scangate.ValidUsername(username) {
		return Issued{}, scangate.Errorf(scangate.KindUnauthorized, "the username or password is wrong")
	}
	user, fails, err := l.Store.LoginLookup(ctx, username)
	if err != nil {
		return Issued{}, err
	}
	now := l.Now()
	if recent := within(fails.Times, now); len(recent) >= MaxFailures {
		wait := recent[len(recent)-MaxFailures].Add(FailureWindow).Sub(now)
		return Issued{}, &scangate.Error{Kind: scangate.KindTooMany, RetryAfter: wait,
			Detail: "too many failed logins for this username; wait before trying again"}
	}
	hash := ""
	if user != nil {
		hash = user.PasswordHash
	}
	ok, err := CheckPassword(hash, password)
	if err != nil {
		return Issued{}, fmt.Errorf("check password of user %d: %w", user.ID, err)
	}
	if !ok || !user.Active {
		if err := l.recordFailure(ctx, username, fails, now); err != nil {
			return Issued{}, err
		}
		return Issued{}, scangate.Errorf(scangate.KindUnauthorized, "the username or password is wrong")
	}
	token, err := NewToken(user.ID)
	if err != nil {
		return Issued{}, err
	}
	err = l.Store.PutToken(ctx, scangate.Token{Hash: HashToken(token), UserID: user.ID, Kind: "login", CreatedAt: now, ExpiresAt: now.Add(l.TokenTTL)})
	if err != nil {
		return Issued{}, err
	}
	return Issued{Token: token, ExpiresIn: l.TokenTTL}, nil
}

// recordFailure appends a failure under an optimistic version check,
// re-reading and trying again when a concurrent login wrote first.
func (l Login) recordFailure(ctx context.Context, username string, fails scangate.LoginFailures, now time.Time) error {
	for attempt := 0; ; attempt++ {
		times := append(within(fails.Times, now), now)
		if len(times) > MaxFailures {
			times = times[len(times)-MaxFailures:]
		}
		saved, err := l.Store.SaveLoginFailures(ctx, username, fails, times, now.Add(FailureWindow))
		if err != nil || saved {
			return err
		}
		if attempt == 20 {
			return scangate.Unavailable(fmt.Errorf("record login failure: too much contention"))
		}
		if fails, err = l.Store.LoginFailures(ctx, username); err != nil {
			return err
		}
	}
}

// within returns the times inside the failure window ending at now, oldest first.
func within(times []time.Time, now time.Time) []time.Time {
	var out []time.Time
	for _, t := range times {
		if now.Sub(t) < FailureWindow {
			out = append(out, t)
		}
	}
	return out
}
