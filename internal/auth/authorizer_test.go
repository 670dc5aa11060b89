package auth_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

const methodARN = "arn:aws:execute-api:us-east-1:123456789012:api1/prod/GET/api/pr/scan/1"

// newUser stores a user directly and returns it.
func newUser(t *testing.T, env *ddbtest.Env, name string, role scangate.Role, active bool) scangate.User {
	t.Helper()
	now := scangate.At(time.Now())
	u, err := env.Store.CreateUser(context.Background(), scangate.User{
		Username: name, Email: name + "@example.com", Role: role, Active: active,
		PasswordHash: mustHash(t, name+"-password"), CreatedAt: now, UpdatedAt: now,
	}, scangate.Who{RequestID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustHash(t *testing.T, pw string) string {
	t.Helper()
	h, err := password.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func issue(t *testing.T, env *ddbtest.Env, userID int64, expires time.Time) string {
	t.Helper()
	tok, err := auth.NewToken(userID)
	if err != nil {
		t.Fatal(err)
	}
	err = env.Store.PutToken(context.Background(), scangate.Token{Hash: auth.HashToken(tok), UserID: userID, Kind: "login", CreatedAt: time.Now(), ExpiresAt: expires}, scangate.Who{RequestID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthorizer(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	a := auth.Authorizer{Store: env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	alice := newUser(t, env, "alice", scangate.RoleUser, true)
	bob := newUser(t, env, "bob", scangate.RoleReadonly, true)
	good := issue(t, env, alice.ID, time.Now().Add(time.Hour))
	expired := issue(t, env, alice.ID, time.Now().Add(-time.Second))
	revoked := issue(t, env, alice.ID, time.Now().Add(time.Hour))
	if err := env.Store.RevokeTokenHash(ctx, auth.HashToken(revoked), scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	bobs := issue(t, env, bob.ID, time.Now().Add(time.Hour))
	if _, err := env.Store.UpdateUser(ctx, bob.ID, func(u *scangate.User) error { u.Active = false; return nil }, scangate.Who{RequestID: "test"}); err != nil {
		t.Fatal(err)
	}
	unknown, _ := auth.NewToken(alice.ID)
	mistyped := good[:20] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", good[20])+1)%16]) + good[21:]
	// A token naming another user: the right shape and checksum, but its
	// hash is not stored for that user.
	otherUser, _ := auth.NewToken(bob.ID)

	for _, c := range []struct {
		name, header string
		trips        int64
	}{
		{"missing", "", 0},
		{"no scheme", good, 0},
		{"basic scheme", "Basic " + good, 0},
		{"mistyped", "Bearer " + mistyped, 0},
		{"garbage", "Bearer abc", 0},
		{"unknown", "Bearer " + unknown, 1},
		{"other user's id", "Bearer " + otherUser, 1},
		{"expired", "Bearer " + expired, 1},
		{"revoked", "Bearer " + revoked, 1},
		{"inactive user", "Bearer " + bobs, 1},
	} {
		var err error
		trips := env.CountTrips(func() {
			_, err = a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: c.header, MethodArn: methodARN})
		})
		if err == nil || err.Error() != "Unauthorized" {
			t.Errorf("%s: err = %v; want Unauthorized", c.name, err)
		}
		if trips != c.trips {
			t.Errorf("%s: %d round trips; want %d", c.name, trips, c.trips)
		}
	}

	var resp events.APIGatewayCustomAuthorizerResponse
	var err error
	trips := env.CountTrips(func() {
		resp, err = a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: "bearer " + good, MethodArn: methodARN})
	})
	if err != nil {
		t.Fatal(err)
	}
	// One read, and the record of the token's use (at most once a minute).
	if trips != 2 {
		t.Errorf("a valid token's first use took %d round trips; want 2", trips)
	}
	if trips := env.CountTrips(func() {
		_, err = a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: "Bearer " + good, MethodArn: methodARN})
	}); trips != 1 || err != nil {
		t.Errorf("within the minute: %d round trips, %v; want 1", trips, err)
	}
	st := resp.PolicyDocument.Statement
	if len(st) != 1 || st[0].Effect != "Allow" || len(st[0].Resource) != 1 ||
		st[0].Resource[0] != "arn:aws:execute-api:us-east-1:123456789012:api1/prod/*/*" || st[0].Action[0] != "execute-api:Invoke" {
		t.Errorf("policy = %+v; want Allow execute-api:Invoke on the whole API", resp.PolicyDocument)
	}
	want := map[string]any{"user_id": "1", "username": "alice", "role": "user"}
	for k, v := range want {
		if resp.Context[k] != v {
			t.Errorf("context[%s] = %v; want %v", k, resp.Context[k], v)
		}
	}
	if resp.PrincipalID != "1" {
		t.Errorf("principal = %q", resp.PrincipalID)
	}
}

func TestAuthorizerDatabaseFailureIsNotUnauthorized(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	alice := newUser(t, env, "alice", scangate.RoleUser, true)
	tok := issue(t, env, alice.ID, time.Now().Add(time.Hour))
	a := auth.Authorizer{Store: env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	for _, answer := range []*ddbtest.Answer{ddbtest.InternalServerError(), ddbtest.Throttled()} {
		var attempts atomic.Int64
		fault := func(string, any) error {
			attempts.Add(1)
			return answer
		}
		env.Fault.Store(&fault)
		_, err := a.Handle(context.Background(), events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + tok, MethodArn: methodARN})
		env.Fault.Store(nil)
		if err == nil || err.Error() == "Unauthorized" || attempts.Load() == 0 {
			t.Fatalf("%s: err = %v after %d attempts; want a failure that API Gateway answers 503 (AUTHORIZER_FAILURE)", answer.Type, err, attempts.Load())
		}
	}
}

// TestAuthorizerCarriesRepos: the authorizer's answer for a token scoped
// to repositories carries them (the reads check them), in the same round
// trips as any token's; an unscoped token's answer has no repos.
func TestAuthorizerCarriesRepos(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	a := auth.Authorizer{Store: env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	alice := newUser(t, env, "alice", scangate.RoleUser, true)
	plain := issue(t, env, alice.ID, time.Now().Add(time.Hour))
	scoped, err := auth.NewToken(alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.PutToken(ctx, scangate.Token{Hash: auth.HashToken(scoped), UserID: alice.ID, Kind: scangate.TokenPersonal, Name: "ci",
		Scope: scangate.ScopeScan, Repos: []scangate.RepoRef{{VcID: 10, RepoID: 100}, {VcID: 11, RepoID: 5}}, CreatedAt: time.Now(),
		ExpiresAt: time.Now().Add(time.Hour)}, scangate.Who{RequestID: "test"}); err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]any{plain: nil, scoped: "10/100,11/5"} {
		var resp events.APIGatewayCustomAuthorizerResponse
		trips := env.CountTrips(func() {
			resp, err = a.Handle(ctx, events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: "Bearer " + tok, MethodArn: methodARN})
		})
		if err != nil || trips != 2 {
			t.Fatalf("%v after %d round trips; want an answer after 2 (the read, the record of its use)", err, trips)
		}
		if got := resp.Context["repos"]; got != want {
			t.Errorf("context repos %v; want %v", got, want)
		}
	}
}
