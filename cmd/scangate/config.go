package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/cienv"
	"github.com/scangate/scangate/pkg/client"
)

// newFlags is a command's flag set; its --help writes the command's
// synopsis and description above its flags.
func (a *app) newFlags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("scangate "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: scangate %s %s\n\n%s\nflags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses a command's flags, which may come before, between or
// after its arguments (all arguments after "--"), and gives the arguments:
// at most max of them, or any number when max is negative. --help writes
// the command's usage on standard output (it was asked for); a bad flag is
// a usage error.
func (a *app) parse(fs *flag.FlagSet, argv []string, max int) ([]string, error) {
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(a.stdout)
	var args []string
	for {
		err := fs.Parse(argv)
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.SetOutput(a.stdout)
			fs.Usage()
			return nil, err
		case err != nil:
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if at := len(argv) - len(rest); at > 0 && argv[at-1] == "--" {
			args = append(args, rest...)
			break
		}
		args, argv = append(args, rest[0]), rest[1:]
	}
	if max >= 0 && len(args) > max {
		return nil, usagef("unexpected argument %q", args[max])
	}
	return args, nil
}

// common are the flags of every command that calls the service.
type common struct {
	url        string
	tokenStdin bool
	json       bool
	timeout    time.Duration
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "url", "", "the API's base URL, ending in /api (default $SCANGATE_URL)")
	fs.BoolVar(&c.tokenStdin, "token-stdin", false, "read the token from the first line of standard input instead of $SCANGATE_TOKEN")
	fs.BoolVar(&c.json, "json", false, "print the service's JSON for machines instead of tables")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long (uploads included, and their processing)")
}

// client builds the API client from the flags and the environment. The
// token is read here and kept only in the client.
func (a *app) client(c common) (*client.Client, error) {
	base, err := a.baseURL(c.url)
	if err != nil {
		return nil, err
	}
	token := a.getenv("SCANGATE_TOKEN")
	if c.tokenStdin {
		line, err := bufio.NewReader(a.stdin).ReadString('\n')
		if err != nil && line == "" {
			return nil, usagef("--token-stdin: no token on standard input")
		}
		token = line
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, usagef("no token: set SCANGATE_TOKEN or pass --token-stdin and write it to standard input")
	}
	a.secret, a.base = token, base
	a.stdout, a.stderr = redactor{a.stdout, token}, redactor{a.stderr, token}
	return client.New(base, token, "scangate-cli/"+buildInfo().Version, nil)
}

// baseURL is the API's URL: flag, else SCANGATE_URL.
func (a *app) baseURL(flag string) (string, error) {
	base := flag
	if base == "" {
		base = a.getenv("SCANGATE_URL")
	}
	if base == "" {
		return "", usagef("no API URL: set SCANGATE_URL (the base URL, ending in /api) or pass --url")
	}
	return base, nil
}

// target are the flags that name a pull request, over what the CI's
// environment says.
type target struct {
	vcType, vcName, repoName, prName, prLink string
	commitSHA, ref                           string
	vcID, repoID, webhookID, pr, prID        int64
}

// register adds the flags that find a pull request; envelope adds those
// that only recording a scan needs.
func (t *target) register(fs *flag.FlagSet, envelope bool) {
	fs.Int64Var(&t.vcID, "vc-id", 0, "the version-control integration's id (default $SCANGATE_VC_ID, else 1; 2 on GitLab CI)")
	fs.Int64Var(&t.repoID, "repo-id", 0, "the repository's id (default $GITHUB_REPOSITORY_ID or $CI_PROJECT_ID)")
	fs.Int64Var(&t.pr, "pr", 0, "the pull (merge) request's number (default from the CI's event or $CI_MERGE_REQUEST_IID)")
	if !envelope {
		fs.Int64Var(&t.prID, "pr-id", 0, "the service's id of the pull request (a scan's pr_id); no look-up by number")
		return
	}
	fs.StringVar(&t.vcType, "vc-type", "", "the version-control system's type (default github or gitlab from the CI)")
	fs.StringVar(&t.vcName, "vc-name", "", "its name (default $SCANGATE_VC_NAME, else the CI's server host)")
	fs.StringVar(&t.repoName, "repo-name", "", "the repository's name (default $GITHUB_REPOSITORY or $CI_PROJECT_PATH)")
	fs.Int64Var(&t.webhookID, "webhook-id", 0, "the webhook id recorded with the pull request (default $SCANGATE_WEBHOOK_ID, else 1)")
	fs.StringVar(&t.prName, "pr-name", "", "the pull request's title (default from the CI)")
	fs.StringVar(&t.prLink, "pr-link", "", "the pull request's URL (default from the CI)")
	fs.StringVar(&t.commitSHA, "commit-sha", "", "the commit scanned, the pull request's head (default from the CI's event or variables)")
	fs.StringVar(&t.ref, "ref", "", "the ref scanned (default $GITHUB_REF or $CI_MERGE_REQUEST_REF_PATH)")
}

// pullRequest is a pull request as the environment and the flags name it.
type pullRequest struct {
	ci       cienv.Context
	envelope client.Envelope
}

// resolve merges the CI's environment, scangate's variables and the flags
// (in that order of precedence, lowest first). A command that needs a
// pull request and has none is a usage error that says so.
func (a *app) resolve(t target) (pullRequest, error) {
	ci, err := cienv.Read(a.getenv, a.readFile)
	if err != nil {
		return pullRequest{}, usagef("reading the CI's environment: %v", err)
	}
	e := client.Envelope{VcType: ci.VcType, VcName: ci.VcName, RepoID: ci.RepoID, RepoName: ci.RepoName,
		PR: client.PRRef{Number: ci.PR, Name: ci.PRName, Link: ci.PRLink}, CommitSHA: ci.CommitSHA, Ref: ci.Ref}
	e.VcID = 1
	if ci.CI == "gitlab" {
		e.VcID = 2
	}
	e.WebhookID = 1
	for _, v := range []struct {
		name string
		to   *int64
	}{{"SCANGATE_VC_ID", &e.VcID}, {"SCANGATE_WEBHOOK_ID", &e.WebhookID}} {
		if s := a.getenv(v.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return pullRequest{}, usagef("%s=%q is not a positive integer", v.name, s)
			}
			*v.to = n
		}
	}
	if s := a.getenv("SCANGATE_VC_NAME"); s != "" {
		e.VcName = s
	}
	override(&e.VcType, t.vcType)
	override(&e.VcName, t.vcName)
	override(&e.RepoName, t.repoName)
	override(&e.PR.Name, t.prName)
	override(&e.PR.Link, t.prLink)
	override(&e.VcID, t.vcID)
	override(&e.RepoID, t.repoID)
	override(&e.WebhookID, t.webhookID)
	override(&e.PR.Number, t.pr)
	override(&e.CommitSHA, t.commitSHA)
	override(&e.Ref, t.ref)
	e.PR.Name = clip(e.PR.Name, 256)
	return pullRequest{ci: ci, envelope: e}, nil
}

func override[T comparable](to *T, flag T) {
	var zero T
	if flag != zero {
		*to = flag
	}
}

// clip keeps at most n characters of s (the service's bound of a PR's
// title).
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// needPR checks that a pull request is named: outside one, it says why.
func (p pullRequest) needPR() error {
	if p.envelope.PR.Number > 0 {
		return nil
	}
	where := "no CI recognised (neither GITHUB_ACTIONS nor GITLAB_CI is true)"
	switch p.ci.CI {
	case "github":
		where = fmt.Sprintf("GitHub Actions event %q has no pull_request in its payload", p.ci.Event)
	case "gitlab":
		where = fmt.Sprintf("GitLab pipeline %q has no merge request (CI_MERGE_REQUEST_IID is unset)", p.ci.Event)
	}
	return usagef("not in a pull request: %s; run it on pull request events or pass --pr N", where)
}

// needRepo checks that the pull request's repository is named.
func (p pullRequest) needRepo() error {
	if p.envelope.RepoID == 0 {
		return usagef("no repository id: pass --repo-id (on GitHub Actions GITHUB_REPOSITORY_ID, on GitLab CI CI_PROJECT_ID)")
	}
	return nil
}

// needEnvelope checks what recording a scan needs besides the numbers.
func (p pullRequest) needEnvelope() error {
	e := p.envelope
	for _, f := range []struct{ flag, value string }{
		{"--vc-type", e.VcType}, {"--vc-name", e.VcName}, {"--repo-name", e.RepoName}, {"--pr-name", e.PR.Name}, {"--pr-link", e.PR.Link},
	} {
		if f.value == "" {
			return usagef("no value for %s (the CI's environment does not give one): pass it", f.flag)
		}
	}
	return nil
}

// prID is the service's id of the pull request: --pr-id, or looked up by
// (vc_id, repo_id, number).
func prID(ctx context.Context, c *client.Client, t target, p pullRequest) (int64, error) {
	if t.prID > 0 {
		return t.prID, nil
	}
	if err := p.needPR(); err != nil {
		return 0, err
	}
	if err := p.needRepo(); err != nil {
		return 0, err
	}
	e := p.envelope
	pr, err := c.FindPR(ctx, e.VcID, e.RepoID, e.PR.Number)
	return pr.ID, err
}
