package scangate

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/bmatcuk/doublestar/v4"
)

// Trust lets a CI system's id tokens be exchanged for scan tokens
// (POST /auth/oidc/token): tokens of Issuer for Audience that name one of
// Repos and whose claims match every condition (claim name to glob).
type Trust struct {
	Name       string
	Issuer     string
	Audience   string
	Repos      []RepoRef
	Conditions map[string]string
	UpdatedBy  int64
	UpdatedAt  Time
}

// Bounds of a trust.
const (
	MaxTrustConditions = 20
	MaxTrustText       = 256 // issuer, audience, a claim's name, a glob
)

// trustName is the form of a trust's name (its path segment).
var trustName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// ValidTrustName reports whether s may name a trust.
func ValidTrustName(s string) bool { return trustName.MatchString(s) }

// ValidateTrust checks what a trust holds besides its issuer's URL (the
// egress rules check that): an audience, 1 to MaxTokenRepos repositories,
// conditions of claims named and globs that compile.
func ValidateTrust(p *Problems, t Trust) {
	if t.Audience == "" || len(t.Audience) > MaxTrustText {
		p.Add("/audience", "must be 1 to %d bytes", MaxTrustText)
	}
	if len(t.Repos) == 0 {
		p.Add("/repos", "must name 1 to %d repositories", MaxTokenRepos)
	} else {
		ValidateRepos(p, "/repos", t.Repos)
	}
	if len(t.Conditions) > MaxTrustConditions {
		p.Add("/conditions", "must hold at most %d claims", MaxTrustConditions)
	}
	names := make([]string, 0, len(t.Conditions))
	for k := range t.Conditions {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g := t.Conditions[k]
		at := "/conditions/" + escapePointer(k)
		switch {
		case k == "" || len(k) > MaxTrustText:
			p.Add(at, "a claim's name must be 1 to %d bytes", MaxTrustText)
		case g == "" || len(g) > MaxTrustText || !doublestar.ValidatePattern(g):
			p.Add(at, "must be a glob of 1 to %d bytes", MaxTrustText)
		default:
			if _, err := compileGlob(g); err != nil {
				p.Add(at, "%s", err.Error())
			}
		}
	}
}

// escapePointer escapes a member's name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, "~0"...)
		case '/':
			out = append(out, "~1"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// TrustRepoView is a repository of a trust as the API shows it.
type TrustRepoView struct {
	VcID   int64 `json:"vc_id"`
	RepoID int64 `json:"repo_id"`
}

// TrustView is a trust as the API shows it.
type TrustView struct {
	Name       string            `json:"name"`
	Issuer     string            `json:"issuer"`
	Audience   string            `json:"audience"`
	Repos      []TrustRepoView   `json:"repos"`
	Conditions map[string]string `json:"conditions"`
	UpdatedBy  int64             `json:"updated_by"`
	UpdatedAt  Time              `json:"updated_at"`
}

// ViewTrust is the view of a trust.
func ViewTrust(t Trust) TrustView {
	v := TrustView{Name: t.Name, Issuer: t.Issuer, Audience: t.Audience, Repos: make([]TrustRepoView, len(t.Repos)),
		Conditions: t.Conditions, UpdatedBy: t.UpdatedBy, UpdatedAt: t.UpdatedAt}
	for i, r := range t.Repos {
		v.Repos[i] = TrustRepoView(r)
	}
	if v.Conditions == nil {
		v.Conditions = map[string]string{}
	}
	return v
}

// Match tells which of the trust's repositories a verified id token of
// its issuer and audience names, and whether its claims meet every
// condition: repoID is the token's repository claim (GitHub's
// repository_id, GitLab's project_id), claims all its claims. The error
// says why the token does not match (for the audit log), never a claim's
// whole value set.
func (t Trust) Match(repoID string, claims map[string]any) (RepoRef, error) {
	id, err := strconv.ParseInt(repoID, 10, 64)
	if err != nil || id < 1 {
		return RepoRef{}, fmt.Errorf("the id token names no repository id")
	}
	i := slices.IndexFunc(t.Repos, func(r RepoRef) bool { return r.RepoID == id })
	if i < 0 {
		return RepoRef{}, fmt.Errorf("the trust %s does not name the repository %d", t.Name, id)
	}
	names := make([]string, 0, len(t.Conditions))
	for k := range t.Conditions {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v, ok := claims[k].(string)
		if !ok {
			return RepoRef{}, fmt.Errorf("the claim %s is absent or not a string (the trust %s's condition)", k, t.Name)
		}
		re, err := compileGlob(t.Conditions[k])
		if err != nil || !re.MatchString(v) {
			return RepoRef{}, fmt.Errorf("the claim %s does not match the trust %s's condition %q", k, t.Name, t.Conditions[k])
		}
	}
	return t.Repos[i], nil
}
