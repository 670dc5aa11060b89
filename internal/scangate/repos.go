package scangate

import (
	"slices"
	"strconv"
	"strings"
)

// RepoRef names one repository: the id of its version-control system and
// its own id there, as scans are recorded with them.
type RepoRef struct {
	VcID, RepoID int64
}

// MaxTokenRepos is how many repositories a token may be scoped to.
const MaxTokenRepos = 100

// ValidateRepos checks the repositories a token is scoped to (nil: every
// repository): 1 to MaxTokenRepos, each id positive, none twice.
func ValidateRepos(p *Problems, ptr string, repos []RepoRef) {
	if repos == nil {
		return
	}
	if len(repos) < 1 || len(repos) > MaxTokenRepos {
		p.Add(ptr, "must name 1 to %d repositories", MaxTokenRepos)
		return
	}
	seen := map[RepoRef]bool{}
	for i, r := range repos {
		at := ptr + "/" + strconv.Itoa(i)
		switch {
		case r.VcID < 1:
			p.Add(at+"/vc_id", "must be a positive integer")
		case r.RepoID < 1:
			p.Add(at+"/repo_id", "must be a positive integer")
		case seen[r]:
			p.Add(at, "names a repository named before")
		}
		seen[r] = true
	}
}

// FormatRepos is the text form of a token's repositories, as stored and as
// the authorizer's context carries them: "vc_id/repo_id" pairs separated
// by commas, in their order; "" for nil (every repository).
func FormatRepos(repos []RepoRef) string {
	if repos == nil {
		return ""
	}
	parts := make([]string, len(repos))
	for i, r := range repos {
		parts[i] = strconv.FormatInt(r.VcID, 10) + "/" + strconv.FormatInt(r.RepoID, 10)
	}
	return strings.Join(parts, ",")
}

// ParseRepos reads FormatRepos's form: nil for ""; ok false for text that
// is not of that form (a token refused rather than taken as unscoped).
func ParseRepos(s string) ([]RepoRef, bool) {
	if s == "" {
		return nil, true
	}
	var out []RepoRef
	for _, part := range strings.Split(s, ",") {
		vc, repo, found := strings.Cut(part, "/")
		v, err1 := strconv.ParseInt(vc, 10, 64)
		r, err2 := strconv.ParseInt(repo, 10, 64)
		if !found || err1 != nil || err2 != nil || v < 1 || r < 1 {
			return nil, false
		}
		out = append(out, RepoRef{VcID: v, RepoID: r})
	}
	return out, true
}

// Reaches reports whether the caller's token reaches the repository: a
// token scoped to repositories reaches those only, any other every one.
func (c Caller) Reaches(vcID, repoID int64) bool {
	return c.Repos == nil || slices.Contains(c.Repos, RepoRef{VcID: vcID, RepoID: repoID})
}

// Repo is the repository of a pull request.
func (p PR) Repo() RepoRef { return RepoRef{VcID: p.VcID, RepoID: p.RepoID} }

// Repo is the repository of a branch.
func (b Branch) Repo() RepoRef { return RepoRef{VcID: b.VcID, RepoID: b.RepoID} }

// Repo is the repository of a pull request's gate.
func (g PRGate) Repo() RepoRef { return RepoRef{VcID: g.VcID, RepoID: g.RepoID} }

// Repo is the repository an upload's scan is of.
func (u Upload) Repo() RepoRef { return RepoRef{VcID: u.Envelope.VcID, RepoID: u.Envelope.RepoID} }
