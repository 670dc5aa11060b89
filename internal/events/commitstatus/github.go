package commitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v75/github"
)

// GitHub posts statuses through GitHub's REST API (api.github.com, or a
// GitHub Enterprise Server's https://HOST/api/v3): the repository of the
// commit's id is found by GET {api_url}/repositories/{id} (cached in
// Names), then POST {api_url}/repos/{owner}/{repo}/statuses/{sha}, each
// segment escaped.
type GitHub struct {
	client *github.Client
	api    string
	names  *Names
}

// NewGitHub returns a Poster for the API at in.APIURL, authenticated with
// in.Token, sending through hc, caching repositories' names in names.
func NewGitHub(in Integration, hc *http.Client, names *Names) (Poster, error) {
	return newGitHub(in.APIURL, hc, names, func(c *github.Client) *github.Client { return c.WithAuthToken(in.Token) })
}

// newGitHub returns a Poster for the API at apiURL whose client auth
// authenticates.
func newGitHub(apiURL string, hc *http.Client, names *Names, auth func(*github.Client) *github.Client) (*GitHub, error) {
	base, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("github api_url: %w", err)
	}
	c := auth(github.NewClient(hc))
	c.BaseURL = base
	c.UserAgent = "scangate"
	return &GitHub{client: c, api: base.String(), names: names}, nil
}

// Post creates the commit status.
func (g *GitHub) Post(ctx context.Context, c Commit, s Status) error {
	if err := checkCommit("github", c); err != nil {
		return err
	}
	owner, repo, err := g.repository(ctx, c.RepoID)
	if err != nil {
		return err
	}
	st := &github.RepoStatus{
		State:       github.Ptr(string(s.State)),
		Context:     github.Ptr(Context),
		Description: github.Ptr(s.Description),
		TargetURL:   github.Ptr(s.TargetURL),
	}
	_, resp, err := g.client.Repositories.CreateStatus(ctx, url.PathEscape(owner), url.PathEscape(repo), c.SHA, st)
	if err == nil {
		return nil
	}
	e := failure(resp, err)
	switch e.StatusCode {
	case http.StatusNotFound, http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		g.names.forget(g.api, c.RepoID) // renamed or transferred: look it up again
	}
	return e
}

// repository returns the owner and name of the repository of id, from the
// cache or from GitHub, refusing a name no GitHub repository has.
func (g *GitHub) repository(ctx context.Context, id int64) (owner, repo string, err error) {
	if owner, repo, ok := g.names.get(g.api, id); ok {
		return owner, repo, nil
	}
	r, resp, err := g.client.Repositories.GetByID(ctx, id)
	if err != nil {
		e := failure(resp, err)
		e.Err = fmt.Errorf("find repository %d: %w", id, e.Err)
		return "", "", e
	}
	owner, repo = r.GetOwner().GetLogin(), r.GetName()
	if !segment(owner) || !segment(repo) {
		return "", "", &Error{Provider: "github", Permanent: true, Err: fmt.Errorf("repository %d is named %q/%q", id, owner, repo)}
	}
	g.names.put(g.api, id, owner, repo)
	return owner, repo, nil
}

// segment reports a path segment that stays one once escaped: not empty,
// not a dot segment (url.PathEscape leaves dots as they are).
func segment(s string) bool {
	return s != "" && s != "." && s != ".."
}

// failure is the Error of a go-github call: the provider's status when it
// answered (rate limits excepted, which are always retried).
func failure(resp *github.Response, err error) *Error {
	e := &Error{Provider: "github", Err: err}
	var rate *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	if resp != nil && !errors.As(err, &rate) && !errors.As(err, &abuse) {
		e.StatusCode = resp.StatusCode
		e.Permanent = permanent(resp.StatusCode)
	}
	return e
}
