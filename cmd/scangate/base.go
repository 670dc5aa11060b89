package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// A commit's full hash: SHA-1 or SHA-256.
var commitHash = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// baseOf is what upload sends as a pull request's base commit, and where
// it comes from: the merge base of the head and the base branch when the
// checkout has both (git merge-base), else the CI's word.
type baseOf struct {
	sha, source string
}

// resolveBase sets the envelope's base_sha of a pull request's scan: the
// flag's as given, else the merge base that git computes in the checkout
// of the head and the base branch's tip (the CI's, else the checkout's
// remote-tracking branch), else the CI's base commit (GitHub's
// pull_request.base.sha, GitLab's CI_MERGE_REQUEST_DIFF_BASE_SHA).
func (a *app) resolveBase(ctx context.Context, p *pullRequest, flag, checkout string) baseOf {
	e := &p.envelope
	switch {
	case e.PR.Number == 0 || e.BaseRef == "":
		e.BaseSHA = ""
		return baseOf{}
	case flag != "":
		return baseOf{e.BaseSHA, "--base-sha"}
	}
	tips := []string{p.ci.BaseTip, "refs/remotes/origin/" + e.BaseRef}
	sha, err := mergeBase(ctx, checkout, e.CommitSHA, tips...)
	if err == nil {
		e.BaseSHA = sha
		return baseOf{sha, "the merge base of the head and " + e.BaseRef + " in the checkout"}
	}
	why := "the checkout has not both commits"
	if errors.Is(err, exec.ErrNotFound) {
		why = "no git on PATH"
	}
	if e.BaseSHA != "" {
		return baseOf{e.BaseSHA, "the CI's base commit: " + why}
	}
	return baseOf{}
}

// mergeBase is git merge-base of head and the first of tips that the
// git checkout at dir has as a commit. It fails without git, outside a
// repository, in a shallow clone without the commits, or when head is
// unknown.
func mergeBase(ctx context.Context, dir, head string, tips ...string) (string, error) {
	if head == "" {
		return "", fmt.Errorf("the head commit is unknown")
	}
	if _, err := exec.LookPath("git"); err != nil {
		return "", fmt.Errorf("git merge-base: %w", err)
	}
	for _, tip := range tips {
		if tip == "" {
			continue
		}
		// merge-base fails on a tip that is not a commit here;
		// --end-of-options keeps a value from being read as an option.
		out, err := git(ctx, dir, "merge-base", "--end-of-options", head, tip)
		if err != nil {
			continue
		}
		if sha := strings.TrimSpace(out); commitHash.MatchString(sha) {
			return sha, nil
		}
	}
	return "", fmt.Errorf("no merge base of %s and %v in %s", head, tips, dir)
}

// git runs one git command in dir and gives its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}
