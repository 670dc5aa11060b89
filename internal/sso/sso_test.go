package sso_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/oidcprovider"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/sso"
)

const (
	clientID     = "scangate-dashboard"
	clientSecret = "client-secret-of-the-test-0123456789"
	redirectURI  = "http://127.0.0.1:9/callback"
)

var mapping = sso.Mapping{Admins: []string{"sec-team"}, Users: []string{"developers"}, Readonly: []string{"auditors"}}

// fixture is a real provider (node oidc-provider) and a session of
// single sign-on against it on a fresh table.
type fixture struct {
	p       *oidcprovider.Provider
	env     *ddbtest.Env
	session *sso.Session
}

func newFixture(t *testing.T) *fixture {
	p := oidcprovider.Start(t, oidcprovider.Options{Clients: []oidcprovider.Client{{
		ID: clientID, Secret: clientSecret, RedirectURIs: []string{redirectURI},
		GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
	}}})
	env := ddbtest.New(t)
	return &fixture{p: p, env: env, session: &sso.Session{
		Settings: sso.Settings{Issuer: p.Issuer, ClientID: clientID, Roles: mapping},
		Secret:   func(context.Context) (string, error) { return clientSecret, nil },
		HTTP:     &http.Client{Timeout: 10 * time.Second},
		Store:    env.Store, Fold: emailfold.Fold, TTL: 12 * time.Hour, Now: time.Now,
	}}
}

func random(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// flow is one authorization request, as the dashboard makes it.
type flow struct {
	state, nonce, verifier string
}

// code signs login in at the provider with a new authorization request
// (PKCE S256, state, nonce) and returns the code it sends back, having
// checked the state as the dashboard does.
func (f *fixture) code(t *testing.T, login string) (string, flow) {
	t.Helper()
	ctx := context.Background()
	p, err := oidc.NewProvider(ctx, f.p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	fl := flow{state: random(t), nonce: random(t), verifier: oauth2.GenerateVerifier()}
	conf := oauth2.Config{ClientID: clientID, Endpoint: p.Endpoint(), RedirectURL: redirectURI, Scopes: []string{"openid", "email", "profile", "groups"}}
	back, err := f.p.SignIn(ctx, conf.AuthCodeURL(fl.state, oauth2.S256ChallengeOption(fl.verifier), oidc.Nonce(fl.nonce)), login)
	if err != nil {
		t.Fatalf("%v\n%s", err, f.p.Logs())
	}
	q := back.Query()
	if q.Get("state") != fl.state || q.Get("code") == "" {
		t.Fatalf("the provider sent back %s", back)
	}
	return q.Get("code"), fl
}

func (f *fixture) signIn(t *testing.T, login string) (auth.Issued, error) {
	t.Helper()
	code, fl := f.code(t, login)
	return f.session.SignIn(context.Background(), sso.Request{Code: code, CodeVerifier: fl.verifier, RedirectURI: redirectURI, Nonce: fl.nonce},
		scangate.Who{RequestID: "test"})
}

func kind(err error) scangate.Kind {
	var e *scangate.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return scangate.KindInternal
}

// userOf reads the user of a session token through the store, as the
// authorizer does.
func (f *fixture) userOf(t *testing.T, issued auth.Issued) scangate.User {
	t.Helper()
	userID, err := auth.ParseToken(issued.Token)
	if err != nil {
		t.Fatal(err)
	}
	tok, u, err := f.env.Store.TokenUser(context.Background(), auth.HashToken(issued.Token), userID)
	if err != nil || tok == nil || u == nil {
		t.Fatalf("the session token is not stored: %v %v %v", tok, u, err)
	}
	if tok.Kind != scangate.TokenLogin || tok.Scope != scangate.ScopeWrite || !near(tok.ExpiresAt.Sub(tok.CreatedAt), time.Hour) {
		t.Errorf("the session token: %+v, want a login token of 1 hour", tok)
	}
	return *u
}

// near: the store keeps expiry to the second.
func near(d, want time.Duration) bool { return d > want-time.Second && d <= want }

// audit lists the entries of action.
func (f *fixture) audit(t *testing.T, action string) []scangate.AuditEntry {
	t.Helper()
	page, err := f.env.Store.AuditPage(context.Background(), scangate.AuditFilter{Action: action}, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// TestSignInMapsGroupsToRoles: a person in a mapped admin group and one in
// a mapped readonly group sign in through the real provider and get a
// user of that role, without a password (a login with any password fails)
// and a 1-hour session token; a person in no mapped group is refused 403,
// audited, and no user is created for them.
func TestSignInMapsGroupsToRoles(t *testing.T) {
	f := newFixture(t)
	for login, role := range map[string]scangate.Role{"alice": scangate.RoleAdmin, "rita": scangate.RoleReadonly} {
		issued, err := f.signIn(t, login)
		if err != nil {
			t.Fatalf("%s: %v", login, err)
		}
		if issued.ExpiresIn != time.Hour {
			t.Errorf("%s: expires in %v", login, issued.ExpiresIn)
		}
		u := f.userOf(t, issued)
		if u.Role != role || u.Username != login || u.Email != login+"@example.com" || !u.Active {
			t.Errorf("%s: user %+v, want role %s", login, u, role)
		}
		a, err := f.env.Store.ReserveLogin(context.Background(), login, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if a.PasswordHash != "" {
			t.Errorf("%s: a user of single sign-on has a password hash", login)
		}
		// The second sign-in reaches the same user: the person's marker
		// and the user read, a token id allocated, the token and its
		// audit entries written in one transaction.
		code, fl := f.code(t, login)
		var again auth.Issued
		trips := f.env.CountTrips(func() {
			again, err = f.session.SignIn(context.Background(), sso.Request{Code: code, CodeVerifier: fl.verifier, RedirectURI: redirectURI, Nonce: fl.nonce},
				scangate.Who{RequestID: "test"})
		})
		if err != nil {
			t.Fatal(err)
		}
		if trips != 4 {
			t.Errorf("%s: a returning sign-in took %d round trips; want 4", login, trips)
		}
		if f.userOf(t, again).ID != u.ID {
			t.Errorf("%s: a second sign-in made another user", login)
		}
	}
	if n := len(f.audit(t, scangate.AuditSSOSignIn)); n != 4 {
		t.Errorf("%d sign-ins audited, want 4", n)
	}
	if n := len(f.audit(t, scangate.AuditUserCreate)); n != 2 {
		t.Errorf("%d users created, want 2", n)
	}
	_, err := f.signIn(t, "mallory")
	if kind(err) != scangate.KindForbidden {
		t.Fatalf("mallory (marketing, no mapped group): %v, want 403", err)
	}
	if _, err := f.env.Store.UserByName(context.Background(), "mallory"); kind(err) != scangate.KindNotFound {
		t.Errorf("a user was created for mallory: %v", err)
	}
	refused := f.audit(t, scangate.AuditSSORefused)
	if len(refused) != 1 || refused[0].Target.ID != "mallory" {
		t.Errorf("refusals audited: %+v", refused)
	}
}

// TestSignInRefusesMismatches: a nonce other than the request's, a PKCE
// verifier other than the challenge's, a redirect URI other than the
// request's and a code used twice are refused 401 and audited; nothing is
// issued.
func TestSignInRefusesMismatches(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cases := map[string]func(r *sso.Request){
		"nonce":        func(r *sso.Request) { r.Nonce = random(t) },
		"no nonce":     func(r *sso.Request) { r.Nonce = "" },
		"verifier":     func(r *sso.Request) { r.CodeVerifier = oauth2.GenerateVerifier() },
		"redirect URI": func(r *sso.Request) { r.RedirectURI = "http://127.0.0.1:9/elsewhere" },
		"code":         func(r *sso.Request) { r.Code = random(t) },
	}
	n := 0
	for name, change := range cases {
		code, fl := f.code(t, "alice")
		r := sso.Request{Code: code, CodeVerifier: fl.verifier, RedirectURI: redirectURI, Nonce: fl.nonce}
		change(&r)
		_, err := f.session.SignIn(ctx, r, scangate.Who{RequestID: name})
		t.Logf("%s mismatch: %v", name, err)
		if kind(err) != scangate.KindUnauthorized {
			t.Errorf("%s mismatch: %v, want 401", name, err)
		}
		n++
	}
	// A code is good once: the second exchange is refused.
	code, fl := f.code(t, "alice")
	r := sso.Request{Code: code, CodeVerifier: fl.verifier, RedirectURI: redirectURI, Nonce: fl.nonce}
	if _, err := f.session.SignIn(ctx, r, scangate.Who{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.session.SignIn(ctx, r, scangate.Who{}); kind(err) != scangate.KindUnauthorized {
		t.Errorf("a code used twice: %v, want 401", err)
	}
	n++
	if got := len(f.audit(t, scangate.AuditSSORefused)); got != n {
		t.Errorf("%d refusals audited, want %d", got, n)
	}
	if got := len(f.audit(t, scangate.AuditSSOSignIn)); got != 1 {
		t.Errorf("%d sign-ins, want the one good one", got)
	}
}

// TestDeactivatedUserStaysOut: once an admin deactivates the user of a
// person, that person's sign-ins are refused 403 (and audited).
func TestDeactivatedUserStaysOut(t *testing.T) {
	f := newFixture(t)
	issued, err := f.signIn(t, "rita")
	if err != nil {
		t.Fatal(err)
	}
	u := f.userOf(t, issued)
	if _, err := f.env.Store.UpdateUser(context.Background(), u.ID, func(u *scangate.User) error {
		u.Active = false
		return nil
	}, scangate.Who{RequestID: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.signIn(t, "rita"); kind(err) != scangate.KindForbidden {
		t.Fatalf("a deactivated user's sign-in: %v, want 403", err)
	}
	refused := f.audit(t, scangate.AuditSSORefused)
	if len(refused) != 1 || refused[0].Changes["reason"].To != "deactivated user" {
		t.Errorf("refusals audited: %+v", refused)
	}
}

// TestRoleChangesAtNextSignIn: when the mapping of the person's groups
// changes, the next sign-in moves the user's role (audited as a user
// update); the user stays the same.
func TestRoleChangesAtNextSignIn(t *testing.T) {
	f := newFixture(t)
	issued, err := f.signIn(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	before := f.userOf(t, issued)
	f.session.Settings.Roles = sso.Mapping{Users: []string{"engineering"}, Admins: []string{"someone-else"}}
	// The last active admin cannot be demoted: make another admin first.
	now := scangate.At(time.Now())
	if _, err := f.env.Store.CreateUser(context.Background(), scangate.User{Username: "root", Email: "root@example.com", EmailKey: "root@example.com",
		Role: scangate.RoleAdmin, Active: true, CreatedAt: now, UpdatedAt: now}, scangate.Who{}); err != nil {
		t.Fatal(err)
	}
	again, err := f.signIn(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	after := f.userOf(t, again)
	if after.ID != before.ID || after.Role != scangate.RoleUser {
		t.Errorf("after the mapping changed: %+v, want user %d as a user", after, before.ID)
	}
	if n := len(f.audit(t, scangate.AuditUserUpdate)); n != 1 {
		t.Errorf("%d user updates audited, want 1", n)
	}
}

// TestNotConfigured: without an issuer, single sign-on answers 404 and
// reads nothing.
func TestNotConfigured(t *testing.T) {
	env := ddbtest.New(t)
	s := &sso.Session{Store: env.Store, Now: time.Now}
	trips := env.CountTrips(func() {
		if _, err := s.SignIn(context.Background(), sso.Request{Code: "c"}, scangate.Who{}); kind(err) != scangate.KindNotFound {
			t.Errorf("not configured: %v, want 404", err)
		}
	})
	if trips != 0 {
		t.Errorf("%d round trips", trips)
	}
}

// TestFirstSignInBesideExistingUsers: a person whose provider username is
// another user's gets the derived username (sso- and 16 hex digits); a
// person whose e-mail address another user holds is refused 409 and
// audited, and is not given that user.
func TestFirstSignInBesideExistingUsers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := scangate.At(time.Now())
	// A password user named alice, with another address.
	if _, err := f.env.Store.CreateUser(ctx, scangate.User{Username: "alice", Email: "alice@corp.example", EmailKey: "alice@corp.example",
		Role: scangate.RoleUser, Active: true, CreatedAt: now, UpdatedAt: now}, scangate.Who{}); err != nil {
		t.Fatal(err)
	}
	issued, err := f.signIn(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	u := f.userOf(t, issued)
	if !strings.HasPrefix(u.Username, "sso-") || len(u.Username) != len("sso-")+16 || u.Email != "alice@example.com" || u.Role != scangate.RoleAdmin {
		t.Errorf("alice of the provider beside a user named alice: %+v", u)
	}
	// A password user holding rita's address.
	if _, err := f.env.Store.CreateUser(ctx, scangate.User{Username: "rita-old", Email: "rita@example.com", EmailKey: "rita@example.com",
		Role: scangate.RoleAdmin, Active: true, CreatedAt: now, UpdatedAt: now}, scangate.Who{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.signIn(t, "rita"); kind(err) != scangate.KindConflict {
		t.Fatalf("rita, whose address another user holds: %v, want 409", err)
	}
	refused := f.audit(t, scangate.AuditSSORefused)
	if len(refused) != 1 || refused[0].Changes["reason"].To != "e-mail taken" {
		t.Errorf("refusals audited: %+v", refused)
	}
}

// keysDown fails every GET but the discovery document's: the provider's
// keys cannot be fetched (the code's exchange, a POST, still goes).
type keysDown struct{}

func (keysDown) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
		return nil, errors.New("the keys are unreachable")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestSignInKeysUnreachable: a provider whose keys cannot be fetched is
// not the person's fault: 503, and no refusal is audited.
func TestSignInKeysUnreachable(t *testing.T) {
	f := newFixture(t)
	f.session.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: keysDown{}}
	if _, err := f.signIn(t, "alice"); kind(err) != scangate.KindUnavailable {
		t.Errorf("keys unreachable: %v, want 503", err)
	}
	if got := len(f.audit(t, scangate.AuditSSORefused)); got != 0 {
		t.Errorf("%d refusals audited, want none", got)
	}
}
