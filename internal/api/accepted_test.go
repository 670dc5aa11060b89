package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// acceptedOf is the accepted list of the 422's error at a pointer or
// parameter.
func acceptedOf(t *testing.T, resp events.APIGatewayProxyResponse, at string) []string {
	t.Helper()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("%d %s; want 422", resp.StatusCode, resp.Body)
	}
	var p struct {
		Errors []struct {
			Pointer, Parameter string
			Accepted           []string
		}
	}
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatal(err)
	}
	for _, e := range p.Errors {
		if e.Pointer == at || e.Parameter == at {
			return e.Accepted
		}
	}
	t.Fatalf("no error at %s: %s", at, resp.Body)
	return nil
}

// TestUnknownNamesListAccepted: a member or a query parameter that is not
// one is refused with the names that are, at its place (nested objects
// and array elements too), and only there.
func TestUnknownNamesListAccepted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.call("create-user", jsonReq(&h.admin, `{"username":"carol","user_email":"carol@example.com","password":"password-123","role":"user","group_id":1}`))
	if got, want := acceptedOf(t, resp, "/group_id"), []string{"active", "password", "role", "user_email", "username"}; !reflect.DeepEqual(got, want) {
		t.Errorf("create user accepts %v; want %v", got, want)
	}
	resp = h.call("record-scan", jsonReq(&h.admin, `{"pr":{"pr_number":1},"findings":[{"level":"high"}]}`))
	if got, want := acceptedOf(t, resp, "/pr/pr_number"), []string{"pr_id", "pr_link", "pr_name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a scan's pr accepts %v; want %v", got, want)
	}
	if got, want := acceptedOf(t, resp, "/findings/0/level"), []string{"aliases", "fingerprint", "line", "name", "path", "rule", "severity"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a finding accepts %v; want %v", got, want)
	}
	if got := acceptedOf(t, resp, "/pr/pr_id"); got != nil {
		t.Errorf("a missing member lists %v; want nothing", got)
	}
	resp = h.read("list-users", &h.admin, nil, "colour=red&limit=0")
	if got, want := acceptedOf(t, resp, "colour"), []string{"active", "cursor", "limit", "role"}; !reflect.DeepEqual(got, want) {
		t.Errorf("list users takes %v; want %v", got, want)
	}
	if got := acceptedOf(t, resp, "limit"); got != nil {
		t.Errorf("a bad limit lists %v; want nothing", got)
	}
}
