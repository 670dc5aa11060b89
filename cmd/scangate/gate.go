package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/scangate/scangate/pkg/client"
)

const gateAbout = `Prints the pull request's gate: whether it may merge, the newest scan of each
(scan type, category) and, when it is blocked, why, per category. Exit status 0 when it
is not blocked, 1 when it is, 2 on any error.

The pull request is the CI's (GitHub Actions, GitLab CI), or --pr with --repo-id, or
--pr-id (the service's id, as a scan's pr_id shows it).
`

var gateCommand = command{name: "gate", synopsis: "[flags]", about: gateAbout, setup: (*app).gateSetup}

func (a *app) gateSetup(fs *flag.FlagSet, o *common) runFunc {
	var t target
	t.register(fs, false)
	return func(ctx context.Context, c *client.Client, _ []string) error {
		p, err := a.resolve(t)
		if err != nil {
			return err
		}
		id, err := prID(ctx, c, t, p)
		if err != nil {
			return err
		}
		g, err := c.Gate(ctx, id)
		if err != nil {
			return err
		}
		return a.showGate(*o, p.label(id), g)
	}
}

// showGate prints a gate and ends the command on it: errBlocked when the
// pull request is blocked.
func (a *app) showGate(o common, label string, g client.Gate) error {
	var err error
	if o.json {
		err = writeJSON(a.stdout, g.JSON)
	} else {
		err = printGate(a.stdout, label, g)
	}
	if err != nil {
		return err
	}
	if g.Blocked {
		return errBlocked
	}
	return nil
}

// label names the pull request for people: repository#number when its
// number is known (the repository by name, else by id), else scangate's id.
func (p pullRequest) label(id int64) string {
	e := p.envelope
	switch {
	case e.RepoName != "" && e.PR.Number > 0:
		return fmt.Sprintf("%s#%d", e.RepoName, e.PR.Number)
	case e.RepoID > 0 && e.PR.Number > 0:
		return fmt.Sprintf("repository %d #%d", e.RepoID, e.PR.Number)
	}
	return fmt.Sprintf("pull request %d", id)
}
