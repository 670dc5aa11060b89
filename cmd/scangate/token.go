package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/scangate/scangate/pkg/client"
)

const tokenAbout = `Creates a personal token of the caller (the token of SCANGATE_TOKEN or --token-stdin)
for a CI job (--scope scan) or a dashboard, as POST /auth/tokens does. Standard output gets the new
token, once, and nothing else (with --json: the service's answer, which holds it); what
it is goes to standard error. Store it as a secret of the CI (SCANGATE_TOKEN).
`

var tokenCreate = command{name: "token create", synopsis: "--name NAME [flags]", about: tokenAbout, setup: (*app).tokenSetup}

func (a *app) token(ctx context.Context, argv []string) error {
	switch {
	case len(argv) > 0 && argv[0] == "create":
		return a.execute(ctx, tokenCreate, argv[1:])
	case len(argv) > 0 && (argv[0] == "-h" || argv[0] == "--help" || argv[0] == "-help" || argv[0] == "help"):
		return a.execute(ctx, tokenCreate, []string{"--help"})
	}
	return usagef("token needs a command: create")
}

func (a *app) tokenSetup(fs *flag.FlagSet, o *common) runFunc {
	var r client.TokenRequest
	fs.StringVar(&r.Name, "name", "", "its name (1-100 characters, unique among your tokens)")
	fs.IntVar(&r.ExpiresInDays, "days", 0, "days until it expires (1-366; default the service's, 90)")
	fs.StringVar(&r.Scope, "scope", "", "what it may do: write (default), read, or scan (record scans and read: for CI jobs)")
	return func(ctx context.Context, c *client.Client, _ []string) error {
		if r.Name == "" {
			return usagef("token create needs --name")
		}
		t, err := c.CreateToken(ctx, r)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(a.stdout, t.JSON)
		}
		fmt.Fprintf(a.stderr, "token %d %q (scope %s) expires %s; it is shown this once\n", t.ID, t.Name, printable(t.Scope), printable(t.ExpiresAt))
		_, err = fmt.Fprintln(a.stdout, printable(t.AccessToken))
		return err
	}
}
