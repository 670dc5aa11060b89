package api_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/scangate"
)

// TestWriteCheckAddsOneRoundTrip: the check of a write (the token the
// request presents and its user) is one BatchGetItem, the first call, and
// the only round trip a write makes beyond its own work: the same work
// done on the store directly makes one fewer.
func TestWriteCheckAddsOneRoundTrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	var mu sync.Mutex // a recording reads its PR record and the policy at once
	var ops []string
	hook := func(op string) {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, op)
	}
	for _, c := range []struct {
		name  string
		store func()
		api   func()
	}{
		{"record-scan", func() {
			if _, _, err := h.env.Store.RecordScan(ctx, scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 10, VcName: "gh",
				RepoID: 100, RepoName: "o/r", WebhookID: 1, PR: scangate.PRRef{Number: 8, Name: "n", Link: "l"}, Status: "completed",
				OtherDetails: []byte("{}")}, scangate.Who{RequestID: "direct"}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}, func() {
			mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{PR: 9, Status: "completed"}.body())))
		}},
		{"create-token", func() {
			if _, _, err := (auth.PersonalTokens{Store: h.env.Store, Now: time.Now, Fold: emailfold.Fold}).Create(ctx, h.admin.ID,
				scangate.NewToken{Name: "one", Days: 1, Scope: scangate.ScopeWrite}, scangate.Who{RequestID: "direct"}); err != nil {
				t.Fatal(err)
			}
		}, func() { mustOK(t, h.createToken(&h.admin, `{"name":"two","expires_in_days":1}`)) }},
		{"create-user", func() {
			at := scangate.At(time.Now())
			if _, err := h.env.Store.CreateUser(ctx, scangate.User{Username: "una", Email: "una@example.com", Role: scangate.RoleUser,
				Active: true, PasswordHash: "x", CreatedAt: at, UpdatedAt: at}, scangate.Who{RequestID: "direct"}); err != nil {
				t.Fatal(err)
			}
		}, func() { mustOK(t, h.call("create-user", jsonReq(&h.admin, createBody("uwe", "user")))) }},
	} {
		direct := h.env.CountTrips(c.store)
		ops = nil
		h.env.Hook.Store(&hook)
		trips := h.env.CountTrips(c.api)
		h.env.Hook.Store(nil)
		if trips != direct+1 || len(ops) == 0 || ops[0] != "BatchGetItem" {
			t.Errorf("%s: %d round trips through the API (%v), %d on the store; want one more, a BatchGetItem first", c.name, trips, ops, direct)
		}
	}
}

// TestWriteRefusesTokenItDoesNotPresent: a write checks the token in the
// request's Authorization header, not the authorizer's context: an
// expired token, another token of the same user than the one the context
// names, another user's token, and none at all are each 401, and nothing
// is written.
func TestWriteRefusesTokenItDoesNotPresent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	uma := h.member("uma", scangate.RoleUser)
	ctx := context.Background()
	expired, err := auth.NewToken(h.admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-2 * time.Hour)
	if err := h.env.Store.PutToken(ctx, scangate.Token{Hash: auth.HashToken(expired), UserID: h.admin.ID, Kind: scangate.TokenLogin,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}, scangate.Who{RequestID: harnessTokens}); err != nil {
		t.Fatal(err)
	}
	other := h.issue(scangate.User{ID: h.admin.ID, Username: h.admin.Username, Role: scangate.RoleAdmin})
	h.mu.Lock()
	otherSecret, umaSecret := h.bearer[other.TokenID], h.bearer[uma.TokenID]
	h.mu.Unlock()
	before := len(h.items())
	for name, authz := range map[string]string{
		"an expired token":                       "Bearer " + expired,
		"another token of the same user":         "Bearer " + otherSecret,
		"another user's token":                   "Bearer " + umaSecret,
		"no token":                               "Basic eDp5",
		"a token that is not one of the service": "Bearer sgt_1_" + expired[len("sgt_1_"):len(expired)-1] + "0",
	} {
		r := jsonReq(&h.admin, scanReq{PR: 9, Status: "completed"}.body())
		r.headers["Authorization"] = authz
		if resp := h.call("record-scan", r); resp.StatusCode != 401 {
			t.Errorf("%s: %d %s; want 401", name, resp.StatusCode, resp.Body)
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused writes stored %d items", after-before)
	}
}

// TestDeactivatedCallerIs401BeforeItsRole: the contract's order, 401
// before 403: a deactivated user whose cached answer still reaches a
// write it may not call (an admin-only route, or recording scans as
// readonly) gets 401; an active one 403.
func TestDeactivatedCallerIs401BeforeItsRole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	uma, rita := h.member("uma", scangate.RoleUser), h.member("rita", scangate.RoleReadonly)
	for _, c := range []scangate.Caller{uma, rita} {
		expectProblem(t, h.call("create-user", jsonReq(&c, createBody("x"+c.Username, "user"))), 403)
	}
	expectProblem(t, h.call("record-scan", jsonReq(&rita, scanReq{}.body())), 403)
	for _, c := range []scangate.Caller{uma, rita} {
		mustOK(t, h.call("update-user", update(h, fmt.Sprint(c.ID), fmt.Sprintf(`{"role":%q,"active":false,"user_email":"%s@example.com"}`, c.Role, c.Username))))
		expectProblem(t, h.call("create-user", jsonReq(&c, createBody("y"+c.Username, "user"))), 401)
	}
	expectProblem(t, h.call("record-scan", jsonReq(&rita, scanReq{}.body())), 401)
}
