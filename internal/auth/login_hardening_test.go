package auth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestLoginRefusesImpossibleUsernamesUnread: a username that no user can
// have (wrong characters or length, anything not ASCII) is a failed login
// decided without a single DynamoDB round trip, so it never reaches a key.
func TestLoginRefusesImpossibleUsernamesUnread(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	newUser(t, env, "kevin", scangate.RoleUser, true)
	l := auth.Login{Store: env.Store, Passwords: password.Argon2id{}, TokenTTL: time.Hour, Now: time.Now}
	ctx := context.Background()
	for _, name := range []string{
		strings.Repeat("k", 2100), strings.Repeat("k", scangate.UsernameMax+1), "", "ke",
		"\u212Aevin", // Kelvin sign: folds to kevin, but is not a username
		"ｋｅｖｉｎ", "kevin\u200b", "kev\x00in", "kevin\u202e", "kev in", "kevin@example.com",
	} {
		var err error
		if n := env.CountTrips(func() { _, err = l.Login(ctx, name, "kevin-password", scangate.Who{RequestID: "test"}) }); n != 0 {
			t.Errorf("login as %.24q (%d bytes) made %d round trips; want 0", name, len(name), n)
		}
		if scangate.KindOf(err) != scangate.KindUnauthorized {
			t.Errorf("login as %.24q (%d bytes): %v; want a failed login", name, len(name), err)
		}
	}
	// The same password under the real username still logs in.
	var err error
	if n := env.CountTrips(func() { _, err = l.Login(ctx, "KEVIN", "kevin-password", scangate.Who{RequestID: "test"}) }); err != nil || n == 0 {
		t.Fatalf("login as KEVIN: %v after %d round trips", err, n)
	}
}
