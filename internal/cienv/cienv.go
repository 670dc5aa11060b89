// Package cienv reads what a CI job knows of the pull request it runs for
// from the CI's own environment: GitHub Actions (its variables and the
// event payload at GITHUB_EVENT_PATH) and GitLab CI (its predefined
// variables), so that a job needs no invented ids.
package cienv

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Context is what the environment says about the change under test.
// Zero members are unknown.
type Context struct {
	CI       string // "github", "gitlab" or "" (none recognised)
	Event    string // what triggered the job, e.g. pull_request, push, merge_request_event
	VcType   string // github or gitlab
	VcName   string // the version-control system's host, e.g. github.com
	RepoID   int64
	RepoName string // owner/name, group/project
	PR       int64  // the pull (merge) request's number; 0 outside one
	PRName   string
	PRLink   string
	// CommitSHA is the head commit of the pull request (not the merge
	// commit a CI may build), Ref the ref it was checked out from.
	CommitSHA string
	Ref       string
}

// Read reads the context from getenv (os.Getenv) and, on GitHub Actions,
// the event payload through readFile (os.ReadFile).
func Read(getenv func(string) string, readFile func(string) ([]byte, error)) (Context, error) {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		return github(getenv, readFile)
	case getenv("GITLAB_CI") == "true":
		return gitlab(getenv)
	}
	return Context{}, nil
}

// githubEvent is what scangate reads of a GitHub Actions event payload.
type githubEvent struct {
	PullRequest *struct {
		Number  int64  `json:"number"`
		Title   string `json:"title"`
		HTMLURL string `json:"html_url"`
		Head    struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
}

var pullRef = regexp.MustCompile(`^refs/pull/([0-9]+)/(merge|head)$`)

func github(getenv func(string) string, readFile func(string) ([]byte, error)) (Context, error) {
	c := Context{CI: "github", Event: getenv("GITHUB_EVENT_NAME"), VcType: "github", RepoName: getenv("GITHUB_REPOSITORY"),
		Ref: getenv("GITHUB_REF"), VcName: host(getenv("GITHUB_SERVER_URL"), "github.com")}
	var err error
	if c.RepoID, err = number("GITHUB_REPOSITORY_ID", getenv); err != nil {
		return c, err
	}
	if path := getenv("GITHUB_EVENT_PATH"); path != "" {
		b, err := readFile(path)
		if err != nil {
			return c, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
		}
		var ev githubEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			return c, fmt.Errorf("GITHUB_EVENT_PATH %s is not an event payload: %w", path, err)
		}
		if pr := ev.PullRequest; pr != nil && pr.Number > 0 {
			c.PR, c.PRName, c.PRLink, c.CommitSHA = pr.Number, pr.Title, pr.HTMLURL, pr.Head.SHA
			return c, nil
		}
	}
	// A job on a pull request's ref whose payload does not describe it:
	// the number is in the ref; GITHUB_SHA is then a merge commit, not the
	// head, so the commit stays unknown.
	if m := pullRef.FindStringSubmatch(c.Ref); m != nil {
		c.PR, _ = strconv.ParseInt(m[1], 10, 64)
		c.PRName = "#" + m[1]
		c.PRLink = strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/") + "/" + c.RepoName + "/pull/" + m[1]
	}
	return c, nil
}

func gitlab(getenv func(string) string) (Context, error) {
	c := Context{CI: "gitlab", Event: getenv("CI_PIPELINE_SOURCE"), VcType: "gitlab", RepoName: getenv("CI_PROJECT_PATH"),
		VcName: getenv("CI_SERVER_HOST"), PRName: getenv("CI_MERGE_REQUEST_TITLE"), CommitSHA: getenv("CI_COMMIT_SHA")}
	if c.VcName == "" {
		c.VcName = "gitlab.com"
	}
	var err error
	if c.RepoID, err = number("CI_PROJECT_ID", getenv); err != nil {
		return c, err
	}
	if c.PR, err = number("CI_MERGE_REQUEST_IID", getenv); err != nil {
		return c, err
	}
	// In a merged results pipeline CI_COMMIT_SHA is the merge's commit; the
	// source branch's head is this one.
	if sha := getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"); sha != "" {
		c.CommitSHA = sha
	}
	c.Ref = getenv("CI_MERGE_REQUEST_REF_PATH")
	if c.Ref == "" && getenv("CI_COMMIT_BRANCH") != "" {
		c.Ref = "refs/heads/" + getenv("CI_COMMIT_BRANCH")
	}
	if c.PR > 0 {
		iid := strconv.FormatInt(c.PR, 10)
		project := getenv("CI_MERGE_REQUEST_PROJECT_URL")
		if project == "" {
			project = getenv("CI_PROJECT_URL")
		}
		c.PRLink = strings.TrimRight(project, "/") + "/-/merge_requests/" + iid
		if c.PRName == "" {
			c.PRName = "!" + iid
		}
	}
	return c, nil
}

// number reads a positive integer variable; unset is 0.
func number(name string, getenv func(string) string) (int64, error) {
	v := getenv(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive integer", name, v)
	}
	return n, nil
}

// host is the host name of a server URL, or def.
func host(server, def string) string {
	if u, err := url.Parse(server); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return def
}
