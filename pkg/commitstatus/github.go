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
// GitHub Enterprise Server's https://HOST/api/v3): POST
// {api_url}/repos/{owner}/{repo}/statuses/{sha}.
type GitHub struct {
	client *github.Client
}

// NewGitHub returns a Poster for the API at apiURL, authenticated with
// token, sending through hc.
func NewGitHub(apiURL, token string, hc *http.Client) (Poster, error) {
	base, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("github api_url: %w", err)
	}
	c := github.NewClient(hc).WithAuthToken(token)
	c.BaseURL = base
	c.UserAgent = "scangate"
	return &GitHub{client: c}, nil
}

// Post creates the commit status.
func (g *GitHub) Post(ctx context.Context, c Commit, s Status) error {
	owner, repo, ok := strings.Cut(c.Repo, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return &Error{Provider: "github", Permanent: true, Err: fmt.Errorf("repository %q is not owner/name", c.Repo)}
	}
	st := &github.RepoStatus{
		State:       github.Ptr(string(s.State)),
		Context:     github.Ptr(Context),
		Description: github.Ptr(s.Description),
		TargetURL:   github.Ptr(s.TargetURL),
	}
	_, resp, err := g.client.Repositories.CreateStatus(ctx, owner, repo, c.SHA, st)
	if err == nil {
		return nil
	}
	e := &Error{Provider: "github", Err: err}
	var rate *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	if resp != nil && !errors.As(err, &rate) && !errors.As(err, &abuse) {
		e.StatusCode = resp.StatusCode
		e.Permanent = permanent(resp.StatusCode)
	}
	return e
}
