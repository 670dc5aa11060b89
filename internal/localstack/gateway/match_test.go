package gateway

import (
	"net/http/httptest"
	"testing"
)

// TestResourceFirst: as on API Gateway, a path picks the most specific
// resource (a literal segment before a {parameter}) and the method is
// looked up on it alone; the stage prefix of the execute-api domain is
// served like the root.
func TestResourceFirst(t *testing.T) {
	tpl, err := ReadTemplate("../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: tpl}
	for _, c := range []struct {
		method, path, function string // "" for no route
		params                 map[string]string
	}{
		{"GET", "/api/users/me", "GetMeFunction", nil},
		{"GET", "/api/users/7", "GetUserFunction", map[string]string{"user_id": "7"}},
		{"PUT", "/api/users/7", "UpdateUserFunction", map[string]string{"user_id": "7"}},
		{"PUT", "/api/users/me", "", nil}, // /users/me has no PUT; /users/{user_id}'s does not count
		{"GET", "/api/pr/scan", "", nil},  // /pr/scan has no GET; /pr/{pr_id}'s does not count
		{"GET", "/api/pr/scan/", "", nil}, // nor with the collection's slash
		{"POST", "/api/pr/scan/", "RecordScanFunction", nil},
		{"GET", "/api/pr/7", "GetPrFunction", map[string]string{"pr_id": "7"}},
		{"GET", "/api/pr/scan/7/findings", "ListFindingsFunction", map[string]string{"pr_scan_id": "7"}},
		{"GET", "/api/pr/7/scans", "ListPrScansFunction", map[string]string{"pr_id": "7"}},
		{"GET", "/api/users/", "ListUsersFunction", nil},
	} {
		r, params, ok := s.match(c.method, c.path)
		if ok != (c.function != "") || ok && (r.Function != c.function || len(params) != len(c.params)) {
			t.Errorf("%s %s: %v %s %v; want %q %v", c.method, c.path, ok, r.Function, params, c.function, c.params)
		}
		for k, v := range c.params {
			if params[k] != v {
				t.Errorf("%s %s: %s=%q; want %q", c.method, c.path, k, params[k], v)
			}
		}
	}
	for called, want := range map[string][2]string{
		"/api/users/7":      {"/api/users/7", "/api/users/7"},
		"/prod/api/users/7": {"/api/users/7", "/api/users/7"},
		"/production/api/x": {"/production/api/x", "/production/api/x"},
		"/prod/api/a%2Fb/c": {"/api/a/b/c", "/api/a%2Fb/c"},
	} {
		path, escaped := s.apiPath(httptest.NewRequest("GET", called, nil))
		if path != want[0] || escaped != want[1] {
			t.Errorf("%s: %q %q; want %q", called, path, escaped, want)
		}
	}
}
