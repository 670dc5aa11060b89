package commitstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// GitLab posts statuses through GitLab's commit status API (gitlab.com's
// https://gitlab.com/api/v4, or a self-managed instance's): POST
// {api_url}/projects/{id}/statuses/{sha}, the project named by its id
// (the recorded repo_id), never by a path a recorder sent. Plain
// net/http: one request does not need a client library.
type GitLab struct {
	api   string
	token string
	hc    *http.Client
}

// NewGitLab returns a Poster for the API at in.APIURL, authenticated with
// in.Token (a personal, project or group access token), sending through hc.
func NewGitLab(in Integration, hc *http.Client, _ *Names) (Poster, error) {
	if _, err := url.Parse(in.APIURL); err != nil {
		return nil, fmt.Errorf("gitlab api_url: %w", err)
	}
	return &GitLab{api: strings.TrimSuffix(in.APIURL, "/"), token: in.Token, hc: hc}, nil
}

// gitlabStates maps scangate's states to GitLab's.
var gitlabStates = map[State]string{Success: "success", Failure: "failed", Pending: "pending"}

// Post creates the commit status. GitLab refuses to set a status to the
// state it already has (400 "Cannot transition status"): the commit shows
// what was to be posted, so that answer counts as posted.
func (g *GitLab) Post(ctx context.Context, c Commit, s Status) error {
	if err := checkCommit("gitlab", c); err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{
		"state":       gitlabStates[s.State],
		"name":        Context,
		"description": s.Description,
		"target_url":  s.TargetURL,
	})
	if err != nil {
		return err
	}
	u := g.api + "/projects/" + strconv.FormatInt(c.RepoID, 10) + "/statuses/" + url.PathEscape(c.SHA)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return &Error{Provider: "gitlab", Permanent: true, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "scangate")
	req.Header.Set("PRIVATE-TOKEN", g.token)
	resp, err := g.hc.Do(req)
	if err != nil {
		return &Error{Provider: "gitlab", Err: unwrapURL(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusBadRequest && bytes.Contains(answer, []byte("Cannot transition status")):
		return nil
	}
	return &Error{Provider: "gitlab", StatusCode: resp.StatusCode, Permanent: permanent(resp.StatusCode),
		Err: fmt.Errorf("%s", bytes.TrimSpace(answer))}
}

// unwrapURL drops the URL from a *url.Error.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
