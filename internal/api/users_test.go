package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

func createBody(name, role string) string {
	return fmt.Sprintf(`{"username":%q,"user_email":"%s@example.com","password":"password-of-%s","role":%q}`, name, name, name, role)
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var resp = h.call("create-user", jsonReq(&h.admin, `{"username":"Alice.B_c-1","user_email":"alice@example.com","password":"a long password","role":"user"}`))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	u := decode(t, resp)
	keys := make([]string, 0, len(u))
	for k := range u {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"active", "added_by_uid", "created_at", "group_id", "id", "role", "updated_at", "updated_by_uid", "user_email", "username"}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("fields %v; want exactly %v", keys, want)
	}
	if u["id"] != float64(2) || u["username"] != "Alice.B_c-1" || u["role"] != "user" || u["user_email"] != "alice@example.com" ||
		u["active"] != true || u["group_id"] != nil || u["added_by_uid"] != float64(h.admin.ID) || u["updated_by_uid"] != float64(h.admin.ID) {
		t.Errorf("user = %v", u)
	}
	if u["created_at"] != u["updated_at"] || len(u["created_at"].(string)) != len("2026-11-22T09:00:00.120Z") || !strings.HasSuffix(u["created_at"].(string), "Z") {
		t.Errorf("timestamps %v, %v; want equal RFC 3339 UTC millisecond times", u["created_at"], u["updated_at"])
	}
	if loc := resp.Headers["Location"]; loc != "/api/users/2" {
		t.Errorf("Location = %q", loc)
	}
	if strings.Contains(resp.Body, "password") || strings.Contains(resp.Body, "argon2") {
		t.Errorf("the response shows the password or its hash: %s", resp.Body)
	}
	// Stored: the hash only.
	for _, it := range h.items() {
		for k, v := range it {
			if strings.Contains(v, "a long password") {
				t.Fatalf("item attribute %s holds the plaintext password", k)
			}
			if k == "pw_hash" && it["SK"] == `{"Value":"USER"}` && it["username"] == `{"Value":"Alice.B_c-1"}` && !strings.Contains(v, "$argon2id$") {
				t.Fatalf("stored hash %s is not argon2id", v)
			}
		}
	}

	// active may be given; false is kept.
	resp = h.call("create-user", jsonReq(&h.admin, `{"username":"bob","user_email":"bob@example.com","password":"bob password 1","role":"readonly","active":false}`))
	if resp.StatusCode != http.StatusCreated || decode(t, resp)["active"] != false {
		t.Fatalf("create inactive: %d %s", resp.StatusCode, resp.Body)
	}
}

func TestCreateUserValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		name, body string
		pointers   []string
	}{
		{"empty object", `{}`, []string{"/username", "/user_email", "/password", "/role"}},
		{"role missing", `{"username":"carol","user_email":"carol@example.com","password":"password-123"}`, []string{"/role"}},
		{"role not in enum", `{"username":"carol","user_email":"carol@example.com","password":"password-123","role":"root"}`, []string{"/role"}},
		{"wrong types", `{"username":1,"user_email":true,"password":[],"role":{},"active":"yes"}`, []string{"/username", "/user_email", "/password", "/role", "/active"}},
		{"null active", `{"username":"carol","user_email":"carol@example.com","password":"password-123","role":"user","active":null}`, []string{"/active"}},
		{"unknown field", `{"username":"carol","user_email":"carol@example.com","password":"password-123","role":"user","group_id":1}`, []string{"/group_id"}},
		{"short username", `{"username":"ab","user_email":"carol@example.com","password":"password-123","role":"user"}`, []string{"/username"}},
		{"long username", `{"username":"` + strings.Repeat("a", 65) + `","user_email":"carol@example.com","password":"password-123","role":"user"}`, []string{"/username"}},
		{"username charset", `{"username":"car ol","user_email":"carol@example.com","password":"password-123","role":"user"}`, []string{"/username"}},
		{"email with name", `{"username":"carol","user_email":"Carol <carol@example.com>","password":"password-123","role":"user"}`, []string{"/user_email"}},
		{"email not an address", `{"username":"carol","user_email":"carol","password":"password-123","role":"user"}`, []string{"/user_email"}},
		{"email too long", `{"username":"carol","user_email":"` + strings.Repeat("c", 250) + `@example.com","password":"password-123","role":"user"}`, []string{"/user_email"}},
		{"short password", `{"username":"carol","user_email":"carol@example.com","password":"short","role":"user"}`, []string{"/password"}},
		{"long password", `{"username":"carol","user_email":"carol@example.com","password":"` + strings.Repeat("p", 129) + `","role":"user"}`, []string{"/password"}},
	} {
		ptrs := expectProblem(t, h.call("create-user", jsonReq(&h.admin, c.body)), http.StatusUnprocessableEntity)
		if !reflect.DeepEqual(ptrs, c.pointers) {
			t.Errorf("%s: pointers %v; want %v", c.name, ptrs, c.pointers)
		}
	}
	if n := h.countUsers(); n != 1 {
		t.Fatalf("%d users stored after invalid creates; want only the admin", n)
	}
}

func TestBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	valid := createBody("dave", "user")
	big := `{"username":"dave","user_email":"dave@example.com","password":"password-123","role":"user","x":"` + strings.Repeat("x", 300<<10) + `"}`
	for _, c := range []struct {
		name   string
		req    request
		status int
	}{
		{"malformed JSON", jsonReq(&h.admin, `{"username":`), 400},
		{"trailing data", jsonReq(&h.admin, valid+` {}`), 400},
		{"not an object", jsonReq(&h.admin, `["username"]`), 400},
		{"a string", jsonReq(&h.admin, `"x"`), 400},
		{"empty body", jsonReq(&h.admin, ``), 400},
		{"repeated member", jsonReq(&h.admin, `{"username":"dave","username":"eve","user_email":"dave@example.com","password":"password-123","role":"user"}`), 400},
		{"not UTF-8", jsonReq(&h.admin, "{\"username\":\"d\xffve\",\"user_email\":\"dave@example.com\",\"password\":\"password-123\",\"role\":\"user\"}"), 400},
		{"deeply nested", jsonReq(&h.admin, `{"x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`), 400},
		{"300 KiB body", jsonReq(&h.admin, big), 413},
		{"no content type", request{caller: &h.admin, body: valid}, 415},
		{"text/plain", request{caller: &h.admin, body: valid, headers: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"wrong types", jsonReq(&h.admin, `{"username":"dave","user_email":"dave@example.com","password":12345678901234,"role":"user"}`), 422},
	} {
		expectProblem(t, h.call("create-user", c.req), c.status)
	}
	// A charset parameter and any header case are fine.
	resp := h.call("create-user", request{caller: &h.admin, body: valid, headers: map[string]string{"content-type": "application/json; charset=utf-8"}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("charset content type: %d %s", resp.StatusCode, resp.Body)
	}
	if n := h.countUsers(); n != 2 {
		t.Fatalf("%d users stored; want the admin and dave only", n)
	}
}

func TestProblemOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	readonly := h.member("rory", scangate.RoleReadonly)
	big := strings.Repeat(" ", 300<<10)
	// 403 before 413, 413 before 415, 415 before 400, 400 before 422 (path), 422 (path) before 422 (body).
	expectProblem(t, h.call("create-user", request{caller: &readonly, body: big}), 403)
	expectProblem(t, h.call("create-user", request{caller: &h.admin, body: "x" + big}), 413)
	expectProblem(t, h.call("create-user", request{caller: &h.admin, body: "x"}), 415)
	expectProblem(t, h.call("update-user", request{caller: &h.admin, body: "x", params: map[string]string{"user_id": "abc"}, headers: map[string]string{"Content-Type": "application/json"}}), 400)
	ptrs := expectProblem(t, h.call("update-user", request{caller: &h.admin, body: `{"role":"x"}`, params: map[string]string{"user_id": "abc"}, headers: map[string]string{"Content-Type": "application/json"}}), 422)
	if !reflect.DeepEqual(ptrs, []string{"/user_id"}) {
		t.Errorf("pointers %v; want the path id alone", ptrs)
	}
	// 422 (body) before 404.
	ptrs = expectProblem(t, h.call("update-user", request{caller: &h.admin, body: `{"role":"x"}`, params: map[string]string{"user_id": "99"}, headers: map[string]string{"Content-Type": "application/json"}}), 422)
	if len(ptrs) == 0 {
		t.Error("no pointers for an invalid body")
	}
}

func TestRolesOnUserOperations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, role := range []scangate.Role{scangate.RoleUser, scangate.RoleReadonly} {
		c := h.member("someone-"+string(role), role)
		expectProblem(t, h.call("create-user", jsonReq(&c, createBody("frank", "user"))), http.StatusForbidden)
		r := jsonReq(&c, `{"role":"admin","active":true,"user_email":"x@example.com"}`)
		r.params = map[string]string{"user_id": "1"}
		expectProblem(t, h.call("update-user", r), http.StatusForbidden)
	}
	expectProblem(t, h.call("create-user", jsonReq(nil, createBody("frank", "user"))), http.StatusUnauthorized)
	if n := h.countUsers(); n != 3 { // the admin and the two callers
		t.Fatalf("%d users; want 3", n)
	}
}

func TestDuplicatesIgnoreCase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if resp := h.call("create-user", jsonReq(&h.admin, createBody("grace", "user"))); resp.StatusCode != 201 {
		t.Fatal(resp.Body)
	}
	expectProblem(t, h.call("create-user", jsonReq(&h.admin, `{"username":"GRACE","user_email":"other@example.com","password":"password-123","role":"user"}`)), http.StatusConflict)
	expectProblem(t, h.call("create-user", jsonReq(&h.admin, `{"username":"grace2","user_email":"Grace@Example.com","password":"password-123","role":"user"}`)), http.StatusConflict)
	if n := h.countUsers(); n != 2 {
		t.Fatalf("%d users; want 2", n)
	}
	// The loser's markers are not left behind: the name and address are
	// still free for the next create.
	if resp := h.call("create-user", jsonReq(&h.admin, `{"username":"other","user_email":"other@example.com","password":"password-123","role":"user"}`)); resp.StatusCode != 201 {
		t.Fatalf("other: %d %s", resp.StatusCode, resp.Body)
	}
}

func update(h *harness, id string, body string) request {
	r := jsonReq(&h.admin, body)
	r.params = map[string]string{"user_id": id}
	return r
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	created := decode(t, h.call("create-user", jsonReq(&h.admin, createBody("heidi", "readonly"))))
	resp := h.call("update-user", update(h, "2", `{"role":"user","active":false,"user_email":"HEIDI@example.com"}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	u := decode(t, resp)
	if u["role"] != "user" || u["active"] != false || u["user_email"] != "HEIDI@example.com" || u["username"] != "heidi" ||
		u["created_at"] != created["created_at"] || u["added_by_uid"] != float64(1) || u["updated_by_uid"] != float64(1) || u["group_id"] != nil {
		t.Errorf("updated user = %v", u)
	}
	if u["updated_at"].(string) < created["updated_at"].(string) {
		t.Errorf("updated_at went back: %v < %v", u["updated_at"], created["updated_at"])
	}
	// username and password are not part of the update: 422 saying so.
	ptrs := expectProblem(t, h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"heidi@example.com","username":"x","password":"new password 1"}`)), 422)
	if !reflect.DeepEqual(ptrs, []string{"/password", "/username"}) {
		t.Errorf("pointers %v", ptrs)
	}
	// All three fields are required.
	ptrs = expectProblem(t, h.call("update-user", update(h, "2", `{}`)), 422)
	if !reflect.DeepEqual(ptrs, []string{"/role", "/active", "/user_email"}) {
		t.Errorf("pointers %v", ptrs)
	}
	expectProblem(t, h.call("update-user", update(h, "99", `{"role":"user","active":true,"user_email":"z@example.com"}`)), 404)
	for _, bad := range []string{"abc", "0", "-1", "01", "+1", "1.5", "9223372036854775808", ""} {
		expectProblem(t, h.call("update-user", update(h, bad, `{"role":"user","active":true,"user_email":"z@example.com"}`)), 422)
	}
	// The address of another user is taken, ignoring case; one's own is not.
	h.call("create-user", jsonReq(&h.admin, createBody("ivan", "user")))
	expectProblem(t, h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"IVAN@example.com"}`)), 409)
	if resp := h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"heidi@EXAMPLE.com"}`)); resp.StatusCode != 200 {
		t.Fatalf("own address in another case: %d %s", resp.StatusCode, resp.Body)
	}
	// Heidi's old address is free again after she changes it.
	if resp := h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"heidi2@example.com"}`)); resp.StatusCode != 200 {
		t.Fatal(resp.Body)
	}
	if resp := h.call("create-user", jsonReq(&h.admin, `{"username":"judy","user_email":"heidi@example.com","password":"password-123","role":"user"}`)); resp.StatusCode != 201 {
		t.Fatalf("the freed address: %d %s", resp.StatusCode, resp.Body)
	}
}

func TestLastActiveAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	expectProblem(t, h.call("update-user", update(h, "1", `{"role":"user","active":true,"user_email":"admin@example.com"}`)), 409)
	expectProblem(t, h.call("update-user", update(h, "1", `{"role":"admin","active":false,"user_email":"admin@example.com"}`)), 409)
	// With a second admin, one of the two may go, but not both.
	h.call("create-user", jsonReq(&h.admin, createBody("ken", "admin")))
	if resp := h.call("update-user", update(h, "1", `{"role":"readonly","active":true,"user_email":"admin@example.com"}`)); resp.StatusCode != 200 {
		t.Fatalf("demote with a second admin: %d %s", resp.StatusCode, resp.Body)
	}
	// The demoted admin can no longer act as one; ken acts from here on.
	expectProblem(t, h.call("update-user", update(h, "2", `{"role":"admin","active":true,"user_email":"ken@example.com"}`)), 403)
	ken, err := h.env.Store.User(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	h.admin = h.issue(ken)
	expectProblem(t, h.call("update-user", update(h, "2", `{"role":"admin","active":false,"user_email":"ken@example.com"}`)), 409)
	// An inactive admin does not count; reactivating one does.
	h.call("create-user", jsonReq(&h.admin, `{"username":"lea","user_email":"lea@example.com","password":"password-123","role":"admin","active":false}`))
	expectProblem(t, h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"ken@example.com"}`)), 409)
	h.call("update-user", update(h, "3", `{"role":"admin","active":true,"user_email":"lea@example.com"}`))
	if resp := h.call("update-user", update(h, "2", `{"role":"user","active":true,"user_email":"ken@example.com"}`)); resp.StatusCode != 200 {
		t.Fatalf("demote with a reactivated admin: %d %s", resp.StatusCode, resp.Body)
	}
}

func TestConcurrentDemotionsKeepOneAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, n := range []string{"mia", "ned", "oli"} {
		h.call("create-user", jsonReq(&h.admin, createBody(n, "admin")))
	}
	// The store is called directly: through the API, an admin demoted a
	// moment earlier would be refused (403) before the count is reached.
	var wg sync.WaitGroup
	kinds := make([]int, 4)
	for i := range 4 {
		wg.Go(func() {
			_, err := h.env.Store.UpdateUser(t.Context(), int64(i+1), func(u *scangate.User) error {
				u.Role = scangate.RoleUser
				return nil
			}, scangate.Who{RequestID: "test"})
			kinds[i] = int(scangate.KindOf(err))
			if err == nil {
				kinds[i] = -1
			}
		})
	}
	wg.Wait()
	slices.Sort(kinds)
	if !reflect.DeepEqual(kinds, []int{-1, -1, -1, int(scangate.KindConflict)}) {
		t.Fatalf("outcomes %v; want three demotions and one conflict", kinds)
	}
}

func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var wg sync.WaitGroup
	codes := make([]int, 20)
	for i := range 20 {
		wg.Go(func() {
			codes[i] = h.call("create-user", jsonReq(&h.admin, fmt.Sprintf(`{"username":"Pat","user_email":"pat%d@example.com","password":"password-123","role":"user"}`, i))).StatusCode
		})
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("status %d; want 201 or 409", c)
		}
	}
	if created != 1 {
		t.Fatalf("%d creates of one username succeeded; want 1", created)
	}

	ids := make([]float64, 50)
	for i := range 50 {
		wg.Go(func() {
			resp := h.call("create-user", jsonReq(&h.admin, createBody(fmt.Sprintf("user%02d", i), "user")))
			if resp.StatusCode == 201 {
				ids[i] = decode(t, resp)["id"].(float64)
			}
		})
	}
	wg.Wait()
	seen := map[float64]bool{}
	for _, id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("ids %v are not 50 distinct ids", ids)
		}
		seen[id] = true
	}
	if n := h.countUsers(); n != 52 {
		t.Fatalf("%d users stored; want 52", n)
	}
}

func TestUserRoundTrips(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	trips := h.env.CountTrips(func() { h.call("create-user", jsonReq(&h.admin, createBody("quinn", "user"))) })
	if trips > 3 {
		t.Errorf("create user: %d round trips; budget 2 and the caller's current record", trips)
	}
	trips = h.env.CountTrips(func() {
		h.call("update-user", update(h, "2", `{"role":"readonly","active":true,"user_email":"quinn2@example.com"}`))
	})
	if trips > 3 {
		t.Errorf("update user: %d round trips; budget 2 and the caller's current record", trips)
	}
}
