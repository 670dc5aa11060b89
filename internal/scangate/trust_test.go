package scangate

import (
	"strings"
	"testing"
)

// TestTrustMatch: a verified id token matches a trust when its repository
// claim is one of the trust's repositories and every condition's glob
// matches its claim (a string); otherwise it is refused with the reason.
func TestTrustMatch(t *testing.T) {
	tr := Trust{Name: "gh", Repos: []RepoRef{{VcID: 1, RepoID: 42}, {VcID: 1, RepoID: 43}},
		Conditions: map[string]string{"ref": "refs/heads/*", "repository": "acme/**"}}
	claims := func(ref any) map[string]any {
		return map[string]any{"ref": ref, "repository": "acme/api", "repository_id": "43"}
	}
	for _, c := range []struct {
		name   string
		repoID string
		claims map[string]any
		want   RepoRef
		reason string
	}{
		{"matches", "43", claims("refs/heads/main"), RepoRef{VcID: 1, RepoID: 43}, ""},
		{"another repository", "44", claims("refs/heads/main"), RepoRef{}, "does not name the repository 44"},
		{"no repository", "", claims("refs/heads/main"), RepoRef{}, "names no repository id"},
		{"a bad repository id", "-3", claims("refs/heads/main"), RepoRef{}, "names no repository id"},
		{"* stops at /", "42", claims("refs/heads/feature/x"), RepoRef{}, `the claim ref does not match the trust gh's condition "refs/heads/*"`},
		{"a tag", "42", claims("refs/tags/v1"), RepoRef{}, "the claim ref does not match"},
		{"the claim absent", "42", map[string]any{"repository": "acme/api"}, RepoRef{}, "the claim ref is absent or not a string"},
		{"the claim not a string", "42", claims(7.0), RepoRef{}, "the claim ref is absent or not a string"},
	} {
		got, err := tr.Match(c.repoID, c.claims)
		switch {
		case c.reason == "" && (err != nil || got != c.want):
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		case c.reason != "" && (err == nil || !strings.Contains(err.Error(), c.reason)):
			t.Errorf("%s: %+v, %v; want a refusal saying %q", c.name, got, err, c.reason)
		}
	}
	// No conditions: the repository alone decides.
	if got, err := (Trust{Repos: []RepoRef{{VcID: 2, RepoID: 7}}}).Match("7", nil); err != nil || got != (RepoRef{VcID: 2, RepoID: 7}) {
		t.Errorf("without conditions: %+v, %v", got, err)
	}
}
