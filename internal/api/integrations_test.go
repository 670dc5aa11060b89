package api_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestIntegrationTokenIsPrintable: an integration's token goes into an
// Authorization header, so it is 1 to MaxIntegrationToken printable ASCII
// characters: white space, a control character (NUL, ESC) or anything
// beyond ASCII is a 422 on /token, and nothing is stored.
func TestIntegrationTokenIsPrintable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	for _, tok := range []string{`ghp_a b`, `ghp_abc\u0000def`, `ghp_abc\u001b[2Jdef`, `ghp_\u007f`, `ghp_caf\u00e9`, `ghp_\u200b`} {
		r := jsonReq(&h.admin, `{"type":"github","token":"`+tok+`"}`)
		r.params = map[string]string{"vc_id": "3"}
		if got := expectProblem(t, h.call("put-integration", r), http.StatusUnprocessableEntity); !slices.Equal(got, []string{"/token"}) {
			t.Errorf("token %s: pointers %v", tok, got)
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("the table went from %d to %d items", before, after)
	}
	r := jsonReq(&h.admin, `{"type":"github","token":"ghp_AbC-123_x.y~z+/="}`)
	r.params = map[string]string{"vc_id": "3"}
	mustOK(t, h.call("put-integration", r))
}
