// Package commitstatus posts a pull request's gate to its commit on the
// version-control system, as a commit status named "scangate": success,
// failure or pending, a description of at most 140 characters and a link
// to the pull request's page in the dashboard. A provider is one file: a
// Poster for GitHub (through go-github) and one for GitLab.
package commitstatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/scangate"
)

// State is a commit status's state, as scangate names it; each provider
// maps it to its own word.
type State string

// The states of a status.
const (
	Success State = "success"
	Failure State = "failure"
	Pending State = "pending"
)

// Context names scangate's status among a commit's statuses.
const Context = "scangate"

// MaxDescription is the longest description, in characters.
const MaxDescription = 140

// Status is what is posted for a commit.
type Status struct {
	State       State
	Description string
	TargetURL   string
}

// Commit is the commit a status is posted for. The repository is named by
// its id on the version-control system (a scan's repo_id), never by the
// name a recorder sent: each provider finds the repository of that id
// (GitHub by GET /repositories/{id}, GitLab takes the id as it is).
type Commit struct {
	RepoID int64
	SHA    string
}

// Poster posts a status for a commit.
type Poster interface {
	Post(ctx context.Context, c Commit, s Status) error
}

// Error is a post that failed: the provider refused it, or it got no answer.
type Error struct {
	Provider   string
	Sent       string // what was being sent: "status" (also when ""), "check run" or "note"
	StatusCode int    // the provider's answer; 0 when there was none
	Permanent  bool   // the same post can never succeed: do not retry it
	Err        error
}

func (e *Error) Error() string {
	sent := e.Sent
	if sent == "" {
		sent = "status"
	}
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: %s not posted (%d): %v", e.Provider, sent, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("%s: %s not posted: %v", e.Provider, sent, e.Err)
}

// sending names what was being sent in err's Error, if it is one.
func sending(sent string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.Sent = sent
	}
	return err
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a failed post may succeed if tried again:
// every failure but a permanent refusal.
func Retryable(err error) bool {
	var e *Error
	return err != nil && !(errors.As(err, &e) && e.Permanent)
}

// permanent reports whether a provider's answer says that the request
// itself is wrong (a malformed or invalid status, an unknown commit), so
// that retrying it cannot help. Authentication and permission errors are
// retried: an administrator may fix the token within the retry window.
func permanent(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusGone, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// Integration is a version-control system's status API, as an
// administrator configures it for a vc_id.
type Integration struct {
	Type   string // a key of Providers
	APIURL string // the REST API's root; "" for the provider's public one
	// Token is the access token; for a GitHub App (github_app), the App's
	// private key (PEM).
	Token string
	// AppID and InstallationID name a GitHub App and its installation
	// (github_app only).
	AppID, InstallationID int64
}

// Provider builds the Poster of one kind of integration.
type Provider struct {
	DefaultAPIURL string
	// New builds the Poster of in, whose APIURL is set.
	New func(in Integration, hc *http.Client, names *Names) (Poster, error)
}

// Providers lists the kinds of integration.
var Providers = map[string]Provider{
	"github": {DefaultAPIURL: "https://api.github.com", New: NewGitHub},
	"gitlab": {DefaultAPIURL: "https://gitlab.com/api/v4", New: NewGitLab},
	// A GitHub App's installation: the same statuses, authenticated by
	// installation tokens the App's key mints.
	"github_app": {DefaultAPIURL: "https://api.github.com", New: NewGitHubApp},
}

// Types lists the names of the providers, sorted.
func Types() []string {
	names := make([]string, 0, len(Providers))
	for n := range Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the Poster of an integration, whose API URL must pass the
// policy (checked again at each connection) and whose requests go through
// hc, a client of the same policy (p.Client(webhook.Timeout)). names
// caches the repositories' names by id for providers that need them (nil:
// looked up at every post).
func New(in Integration, p egress.Policy, hc *http.Client, names *Names) (Poster, error) {
	prov, ok := Providers[in.Type]
	if !ok {
		return nil, fmt.Errorf("no integration of type %q (%s)", in.Type, strings.Join(Types(), ", "))
	}
	api := in.APIURL
	if api == "" {
		api = prov.DefaultAPIURL
	}
	if _, err := p.CheckAPIURL(api); err != nil {
		return nil, fmt.Errorf("%s api_url: %w", in.Type, err)
	}
	if in.Token == "" {
		return nil, fmt.Errorf("%s: no token", in.Type)
	}
	in.APIURL = api
	return prov.New(in, hc, names)
}

// checkCommit refuses, for good, a commit that names no repository or
// whose hash is not one.
func checkCommit(provider string, c Commit) error {
	switch {
	case c.RepoID < 1:
		return &Error{Provider: provider, Permanent: true, Err: fmt.Errorf("repository id %d is not positive", c.RepoID)}
	case !scangate.ValidSHA(c.SHA):
		return &Error{Provider: provider, Permanent: true, Err: fmt.Errorf("commit %q is not a hash", c.SHA)}
	}
	return nil
}
