package auth_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestLoginBurstVerifiesAtMostFivePasswords: 100 wrong logins for one
// username at once verify at most 5 passwords (an attempt is reserved
// before its password is checked); the others answer 429, none 503; the
// right password sent after the burst answers 429 too.
func TestLoginBurstVerifiesAtMostFivePasswords(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	newUser(t, env, "victim", scangate.RoleUser, true)
	var checks atomic.Int64
	l := auth.Login{Store: env.Store, TokenTTL: time.Hour, Now: time.Now,
		Passwords: checkFunc(func(hash, pw string) (bool, error) { checks.Add(1); return password.Check(hash, pw) })}
	var wg sync.WaitGroup
	kinds := make([]scangate.Kind, 100)
	for i := range kinds {
		wg.Go(func() {
			_, err := l.Login(context.Background(), "victim", "wrong-password-1", scangate.Who{RequestID: "test"})
			kinds[i] = scangate.KindOf(err)
		})
	}
	wg.Wait()
	count := map[scangate.Kind]int{}
	for _, k := range kinds {
		count[k]++
	}
	if n := checks.Load(); n > scangate.MaxLoginAttempts {
		t.Errorf("%d passwords verified; at most %d may be", n, scangate.MaxLoginAttempts)
	}
	if count[scangate.KindUnauthorized]+count[scangate.KindTooMany] != 100 || count[scangate.KindUnauthorized] > scangate.MaxLoginAttempts {
		t.Errorf("outcomes %v; want at most 5 failed logins and the rest throttled, nothing else", count)
	}
	// One entry per failure, and one lockout entry: only the reservation
	// that took the last free place writes it.
	for action, want := range map[string]int{scangate.AuditLoginFailure: count[scangate.KindUnauthorized], scangate.AuditLoginThrottled: 1} {
		entries, err := env.Store.AuditPage(context.Background(), scangate.AuditFilter{Action: action}, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries.Items) != want {
			t.Errorf("%d %s entries; want %d", len(entries.Items), action, want)
		}
	}
	_, err := l.Login(context.Background(), "VICTIM", "victim-password", scangate.Who{RequestID: "test"})
	if scangate.KindOf(err) != scangate.KindTooMany {
		t.Errorf("the right password after the burst: %v; want 429", err)
	}
	var de *scangate.Error
	if !errors.As(err, &de) || de.RetryAfter <= 0 || de.RetryAfter > scangate.LoginWindow {
		t.Errorf("Retry-After %v; want within the window", de)
	}
}

// TestFailedLoginsDoTheSameWork: an unknown username, a wrong password and
// an inactive user each verify one password against an argon2id hash of
// the same cost, so their answers take the same time (the hashing is
// nearly all of it) and tell nothing apart.
func TestFailedLoginsDoTheSameWork(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	newUser(t, env, "alice", scangate.RoleUser, true)
	newUser(t, env, "olive", scangate.RoleUser, false)
	var hashes []string
	l := auth.Login{Store: env.Store, TokenTTL: time.Hour, Now: time.Now,
		Passwords: checkFunc(func(hash, pw string) (bool, error) {
			ok, err := password.Check(hash, pw)
			if hash == "" {
				hash = password.DummyHash
			}
			hashes = append(hashes, hash)
			return ok, err
		})}
	for _, c := range [][2]string{{"nobody", "x-password-123"}, {"alice", "wrong-password-1"}, {"olive", "olive-password"}} {
		if _, err := l.Login(context.Background(), c[0], c[1], scangate.Who{RequestID: "test"}); scangate.KindOf(err) != scangate.KindUnauthorized {
			t.Fatalf("%s: %v; want 401", c[0], err)
		}
	}
	if len(hashes) != 3 {
		t.Fatalf("%d verifications for 3 failed logins; want one each", len(hashes))
	}
	params := func(h string) string { return strings.Join(strings.Split(h, "$")[1:4], "$") }
	for _, h := range hashes[1:] {
		if params(h) != params(hashes[0]) {
			t.Errorf("hash parameters %q and %q differ: the failures cost different work", params(h), params(hashes[0]))
		}
	}
}

// checkFunc is an auth.PasswordChecker made of a function.
type checkFunc func(hash, password string) (bool, error)

func (f checkFunc) Check(hash, password string) (bool, error) { return f(hash, password) }
