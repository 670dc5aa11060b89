package ciauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/ciauth"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/oidctest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestExchangeRoundTrips: an exchange reads the issuer's trusts in one
// Query, the owner in one GetItem, allocates the token's id and writes
// the token with its audit entry: four round trips (the issuer's keys are
// fetched outside the table, once). An id token of an issuer no trust
// names costs the Query and the refusal's audit entry, and fetches
// nothing; one that does not verify, the same.
func TestExchangeRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t)
	now := time.Now()
	owner, err := env.Store.CreateUser(ctx, scangate.User{Username: "ada", Email: "ada@example.com", Role: scangate.RoleAdmin, Active: true,
		CreatedAt: scangate.At(now), UpdatedAt: scangate.At(now)}, scangate.Who{RequestID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	is, stranger := oidctest.New(t), oidctest.New(t)
	k := oidctest.RSAKey(t, "k1")
	is.Publish(k)
	stranger.Publish(k)
	who := scangate.Who{Actor: &scangate.Actor{UserID: owner.ID, Username: owner.Username}, RequestID: "test"}
	if _, err := env.Store.PutTrust(ctx, scangate.Trust{Name: "ci", Issuer: is.URL, Audience: audience,
		Repos: []scangate.RepoRef{{VcID: 1, RepoID: 4242}}}, who, now); err != nil {
		t.Fatal(err)
	}
	x := ciauth.Exchange{Store: env.Store, Verifier: verifier(now), Now: func() time.Time { return now }}
	good := oidctest.Sign(t, k, jose.RS256, githubClaims(is.URL, now))
	if _, err := x.Exchange(ctx, good, scangate.Who{RequestID: "warm"}); err != nil { // the keys fetched
		t.Fatal(err)
	}
	var issued auth.Issued
	if n := env.CountTrips(func() { issued, err = x.Exchange(ctx, good, scangate.Who{RequestID: "test"}) }); err != nil || n != 4 {
		t.Errorf("an exchange: %d round trips, %v; want 4", n, err)
	}
	tok, user, err := env.Store.TokenUser(ctx, auth.HashToken(issued.Token), owner.ID)
	if err != nil || tok == nil || user == nil || tok.Kind != scangate.TokenCI || tok.Scope != scangate.ScopeScan ||
		len(tok.Repos) != 1 || tok.Repos[0].RepoID != 4242 || tok.ExpiresAt.After(now.Add(5*time.Minute)) {
		t.Errorf("the token stored: %+v, %v", tok, err)
	}
	for name, raw := range map[string]string{
		"an issuer no trust names": oidctest.Sign(t, k, jose.RS256, githubClaims(stranger.URL, now)),
		"does not verify":          good[:len(good)-4] + "AAAA",
	} {
		before := stranger.Fetches()
		if n := env.CountTrips(func() { _, err = x.Exchange(ctx, raw, scangate.Who{RequestID: "test"}) }); scangate.KindOf(err) != scangate.KindUnauthorized || n != 2 {
			t.Errorf("%s: %d round trips, %v; want 401 after 2", name, n, err)
		}
		if stranger.Fetches() != before {
			t.Errorf("%s: the keys of an issuer no trust names were fetched", name)
		}
	}
	// An issuer that cannot be reached is not the token's fault: 503.
	_, err = ciauth.Exchange{Store: env.Store, Verifier: errVerifier{}, Now: x.Now}.Exchange(ctx, good, scangate.Who{RequestID: "test"})
	if scangate.KindOf(err) != scangate.KindUnavailable {
		t.Errorf("an issuer that cannot be reached: %v", err)
	}
}

type errVerifier struct{}

func (errVerifier) VerifyAny(context.Context, string, []string, string) (ciauth.Claims, error) {
	return ciauth.Claims{}, errors.New("dial tcp: connection refused")
}

// TestExchangeKeysUnreachable: with the real verifier, an issuer whose
// keys cannot be fetched is not the token's fault: 503, not 401.
func TestExchangeKeysUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t)
	now := time.Now()
	owner, err := env.Store.CreateUser(ctx, scangate.User{Username: "ada", Email: "ada@example.com", Role: scangate.RoleAdmin, Active: true,
		CreatedAt: scangate.At(now), UpdatedAt: scangate.At(now)}, scangate.Who{RequestID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	is := oidctest.New(t)
	k := oidctest.RSAKey(t, "k1")
	is.Publish(k)
	is.FailKeys(true)
	who := scangate.Who{Actor: &scangate.Actor{UserID: owner.ID, Username: owner.Username}, RequestID: "test"}
	if _, err := env.Store.PutTrust(ctx, scangate.Trust{Name: "ci", Issuer: is.URL, Audience: audience,
		Repos: []scangate.RepoRef{{VcID: 1, RepoID: 4242}}}, who, now); err != nil {
		t.Fatal(err)
	}
	x := ciauth.Exchange{Store: env.Store, Verifier: verifier(now), Now: func() time.Time { return now }}
	good := oidctest.Sign(t, k, jose.RS256, githubClaims(is.URL, now))
	if _, err := x.Exchange(ctx, good, scangate.Who{RequestID: "test"}); scangate.KindOf(err) != scangate.KindUnavailable {
		t.Errorf("keys unreachable: %v; want 503", err)
	}
}
