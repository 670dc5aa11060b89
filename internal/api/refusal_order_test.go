package api_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/scangate"
)

// TestRefusalOrderEveryRoute: one order of refusals for every token, on
// every writing route of the operations table (a function with a route
// other than GET in template.yaml): a token that may no longer act
// (revoked, or its user deactivated), which the authorizer's cached answer
// still lets through to the function, is 401 wherever the same kind of
// live token is refused with 403 (its scope or its role), and never 403.
// (Reads serve from the authorizer's cached answer, which refuses such a
// token with 401 before any function once it is read again.)
func TestRefusalOrderEveryRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	kinds := []struct {
		role  scangate.Role
		scope string
	}{
		{scangate.RoleAdmin, scangate.ScopeScan},
		{scangate.RoleAdmin, scangate.ScopeRead},
		{scangate.RoleUser, scangate.ScopeWrite},
		{scangate.RoleUser, scangate.ScopeScan},
		{scangate.RoleReadonly, scangate.ScopeWrite},
	}
	// token is a caller of a fresh user of the role with a token of the
	// scope (a login token for write, a personal one otherwise).
	token := func(name string, role scangate.Role, scope string) scangate.Caller {
		c := h.member(name, role)
		if scope == scangate.ScopeWrite {
			return c
		}
		tok := mustOK(t, h.createToken(&c, fmt.Sprintf(`{"name":"ci","scope":%q}`, scope)))
		p, err := h.callerOf(tok["access_token"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	type kind struct {
		name              string
		live, dead, inert scangate.Caller
	}
	var all []kind
	for i, k := range kinds {
		name := fmt.Sprintf("%s-%s", k.role, k.scope)
		live := token(fmt.Sprintf("live%d", i), k.role, k.scope)
		revoked := token(fmt.Sprintf("revoked%d", i), k.role, k.scope)
		inactive := token(fmt.Sprintf("inactive%d", i), k.role, k.scope)
		if err := h.env.Store.RevokeToken(ctx, revoked.TokenID, 0, scangate.Who{RequestID: "test"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		mustOK(t, h.call("update-user", update(h, fmt.Sprint(inactive.ID),
			fmt.Sprintf(`{"role":%q,"active":false,"user_email":"%s@example.com"}`, k.role, inactive.Username))))
		all = append(all, kind{name: name, live: live, dead: revoked, inert: inactive})
	}
	tpl, err := gateway.ReadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]bool{}
	for _, r := range tpl.Routes {
		writes[r.Function] = writes[r.Function] || r.Method != "GET"
	}
	var names []string
	for _, op := range ops.Operations() {
		if op.API != nil && op.Name != "login" && writes[ops.LogicalID(op.Name)] {
			names = append(names, op.Name)
		}
	}
	if len(names) < 20 {
		t.Fatalf("%d writing routes: %v", len(names), names)
	}
	// Logging out ends the live token: last.
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "logout":
			return 1
		case b == "logout":
			return -1
		}
		return 0
	})
	forbidden := 0
	for _, name := range names {
		for _, k := range all {
			dead := map[string]int{}
			for what, c := range map[string]scangate.Caller{"revoked": k.dead, "of a deactivated user": k.inert} {
				resp := h.call(name, jsonReq(&c, `{}`))
				dead[what] = resp.StatusCode
				if resp.StatusCode == 403 {
					t.Errorf("%s, a %s token %s: 403 %s; want 401 first", name, k.name, what, resp.Body)
				}
			}
			if live := h.call(name, jsonReq(&k.live, `{}`)); live.StatusCode == 403 {
				forbidden++
				for what, status := range dead {
					if status != 401 {
						t.Errorf("%s: a live %s token is 403, one %s %d; want 401", name, k.name, what, status)
					}
				}
			}
		}
	}
	if forbidden < len(names) {
		t.Errorf("only %d refusals of live tokens on %d routes: the table does not reach the checks", forbidden, len(names))
	}
}
