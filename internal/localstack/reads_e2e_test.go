package localstack_test

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestListingLinksOverHTTP: through the local API Gateway, a listing's
// Link header names the next page on the path the client called, behind
// the stage (/prod/api/...) or not, with the filters and the limit;
// following the links alone walks every item once, within two DynamoDB
// round trips a page (the authorizer's answer cached).
func TestListingLinksOverHTTP(t *testing.T) {
	stack, api, dir, env := startCounted(t, time.Hour)
	token := loginToken(t, api, "admin", adminPassword(t, dir))
	base := strings.TrimSuffix(api, "/api")
	// Location follows the path the client called, as Link does below.
	for prefix, name := range map[string]string{"/api": "stan", "/prod/api": "stella"} {
		resp, body := do(t, "POST", base+prefix+"/users", token, `{"username":"`+name+`","user_email":"`+name+`@example.com","password":"password-123","role":"user"}`)
		if resp.StatusCode != 201 || !strings.HasPrefix(resp.Header.Get("Location"), prefix+"/users/") {
			t.Errorf("POST %s/users: %d Location %q %s", prefix, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}
	linkRE := regexp.MustCompile(`^<([^>]+)>; rel="next"$`)
	for _, first := range []string{
		"/api/pr?limit=2",
		"/prod/api/pr?limit=4&blocked=true",
		"/prod/api/pr/scan/6/findings?limit=1",
		"/api/users?limit=1&role=user",
	} {
		// The first request runs the authorizer; then it is cached.
		do(t, "GET", base+first, token, "")
		path, _, _ := strings.Cut(first, "?")
		var seen []float64
		next := first
		for pages := 0; next != ""; pages++ {
			var status int
			var link, body string
			settle(t, stack) // the demo data's and the users' events are dispatched through the same table
			trips := env.CountTrips(func() {
				resp, b := do(t, "GET", base+next, token, "")
				status, link, body = resp.StatusCode, resp.Header.Get("Link"), b
			})
			if status != 200 || trips > 2 {
				t.Fatalf("GET %s: %d in %d round trips: %s", next, status, trips, body)
			}
			var p struct {
				Items      []map[string]any
				NextCursor *string `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				t.Fatal(err)
			}
			for _, it := range p.Items {
				if slices.Contains(seen, it["id"].(float64)) {
					t.Errorf("%s: %v twice", first, it["id"])
				}
				seen = append(seen, it["id"].(float64))
			}
			if link == "" {
				if p.NextCursor != nil {
					t.Fatalf("GET %s: a next_cursor without a Link", next)
				}
				break
			}
			m := linkRE.FindStringSubmatch(link)
			if m == nil {
				t.Fatalf("Link %q", link)
			}
			u, err := url.Parse(m[1])
			if err != nil || u.Path != path || u.Query().Get("cursor") != *p.NextCursor || u.Host != "" {
				t.Fatalf("Link %q after GET %s", link, first)
			}
			asked, _ := url.Parse(first)
			for k, v := range asked.Query() {
				if u.Query().Get(k) != v[0] {
					t.Fatalf("Link %q does not repeat %s=%s", link, k, v[0])
				}
			}
			next = m[1]
		}
		if len(seen) == 0 {
			t.Errorf("%s listed nothing", first)
		}
	}
	// The demo data: 6 PRs, each listed once.
	resp, body := do(t, "GET", api+"/pr?limit=100", token, "")
	if resp.StatusCode != 200 || strings.Count(body, `"pr_link"`) != 6 || resp.Header.Get("Link") != "" {
		t.Errorf("GET /pr: %d %s", resp.StatusCode, body)
	}
	// /users/me is its own route; a user id is read by /users/{user_id}.
	for path, want := range map[string]string{"/users/me": `"username":"admin"`, "/users/1": `"id":1,"username":"admin"`} {
		if resp, body := do(t, "GET", api+path, token, ""); resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
}
