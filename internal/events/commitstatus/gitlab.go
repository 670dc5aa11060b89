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
	status, answer, err := g.send(ctx, http.MethodPost, "/projects/"+strconv.FormatInt(c.RepoID, 10)+"/statuses/"+url.PathEscape(c.SHA),
		map[string]string{"state": gitlabStates[s.State], "name": Context, "description": s.Description, "target_url": s.TargetURL})
	switch {
	case err != nil:
		return err
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusBadRequest && bytes.Contains(answer, []byte("Cannot transition status")):
		return nil
	}
	return refused(status, answer)
}

// SyncNote writes a merge request's note (number is its iid in the
// project of repoID): creates it when id is 0, else edits note id, and
// creates a new one when that note is gone (deleted by someone: 404).
// POST and PUT /projects/{id}/merge_requests/{iid}/notes[/{note_id}].
// It returns the note's id.
func (g *GitLab) SyncNote(ctx context.Context, repoID, number, id int64, body string) (_ int64, err error) {
	defer func() { err = sending("note", err) }()
	if repoID < 1 || number < 1 {
		return id, &Error{Provider: "gitlab", Permanent: true, Err: fmt.Errorf("merge request %d of project %d: not positive ids", number, repoID)}
	}
	notes := "/projects/" + strconv.FormatInt(repoID, 10) + "/merge_requests/" + strconv.FormatInt(number, 10) + "/notes"
	req := map[string]string{"body": body}
	if id != 0 {
		status, answer, err := g.send(ctx, http.MethodPut, notes+"/"+strconv.FormatInt(id, 10), req)
		switch {
		case err != nil:
			return id, err
		case status >= 200 && status < 300:
			return id, nil
		case status != http.StatusNotFound:
			return id, refused(status, answer)
		}
	}
	status, answer, err := g.send(ctx, http.MethodPost, notes, req)
	if err != nil {
		return id, err
	}
	if status < 200 || status >= 300 {
		return id, refused(status, answer)
	}
	var note struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(answer, &note); err != nil || note.ID < 1 {
		return id, &Error{Provider: "gitlab", StatusCode: status, Err: fmt.Errorf("the note created has no id: %q", clip(string(answer), 200))}
	}
	return note.ID, nil
}

// maxAnswer is the most of an answer read: a note's answer repeats its
// body (up to a few KiB); a status's is smaller.
const maxAnswer = 64 << 10

// send makes one request of the API with a JSON body and returns the
// answer's status and (at most maxAnswer of) its body.
func (g *GitLab) send(ctx context.Context, method, path string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, &Error{Provider: "gitlab", Permanent: true, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, method, g.api+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, &Error{Provider: "gitlab", Permanent: true, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "scangate")
	req.Header.Set("PRIVATE-TOKEN", g.token)
	resp, err := g.hc.Do(req)
	if err != nil {
		return 0, nil, &Error{Provider: "gitlab", Err: unwrapURL(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return resp.StatusCode, answer, nil
}

// refused is the error of an answer that is not a success: its status,
// and at most 1 KiB of what GitLab said.
func refused(status int, answer []byte) error {
	return &Error{Provider: "gitlab", StatusCode: status, Permanent: permanent(status),
		Err: fmt.Errorf("%s", bytes.TrimSpace([]byte(clip(string(answer), 1024))))}
}

// unwrapURL drops the URL from a *url.Error.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
