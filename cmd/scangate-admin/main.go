// Command scangate-admin administers a scangate table, deployed or local:
// it creates the table (local endpoints), bootstraps the first admin, issues
// long-lived tokens for CI jobs and revokes tokens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/local"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

const usage = `usage: scangate-admin [-table NAME] [-endpoint URL] COMMAND [flags]

commands:
  create-table                          create the table (DynamoDB Local or another endpoint)
  bootstrap -username U -email E        create the first admin; the password comes from
                                        SCANGATE_ADMIN_PASSWORD or is generated and printed
  issue-token -username U [-ttl 720h]   print a new bearer token for U (for CI jobs)
  revoke-token -token T                 revoke one token
  revoke-user-tokens -username U        revoke every token of U
  check                                 recount every scan from its findings and allowlists
                                        and list any drift (exit status 1 when there is some)

-table defaults to TABLE_NAME, -endpoint to DYNAMODB_ENDPOINT (empty: AWS, with the
usual AWS credentials and region).
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scangate-admin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("scangate-admin", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	table := fs.String("table", os.Getenv("TABLE_NAME"), "table name")
	endpoint := fs.String("endpoint", os.Getenv("DYNAMODB_ENDPOINT"), "DynamoDB endpoint URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 || *table == "" {
		fs.Usage()
		return errors.New("a command and a table are required")
	}
	db, err := store.NewClient(ctx, *endpoint)
	if err != nil {
		return err
	}
	st := store.New(db, *table)
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
	username := sub.String("username", "", "username")
	email := sub.String("email", "", "e-mail address")
	token := sub.String("token", "", "bearer token")
	ttl := sub.Duration("ttl", 30*24*time.Hour, "token lifetime")
	if err := sub.Parse(rest); err != nil {
		return err
	}
	switch cmd {
	case "create-table":
		if err := store.CreateTable(ctx, db, *table); err != nil {
			return err
		}
		fmt.Fprintf(out, "table %s is ready\n", *table)
	case "bootstrap":
		password := os.Getenv("SCANGATE_ADMIN_PASSWORD")
		generated := password == ""
		if generated {
			if password, err = local.GeneratePassword(); err != nil {
				return err
			}
		}
		u, err := local.BootstrapAdmin(ctx, st, *username, *email, password)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "admin %q created with id %d\n", u.Username, u.ID)
		if generated {
			fmt.Fprintf(out, "password (shown once): %s\n", password)
		}
	case "issue-token":
		u, err := st.UserByName(ctx, *username)
		if err != nil {
			return err
		}
		if !u.Active {
			return fmt.Errorf("user %q is inactive", u.Username)
		}
		tok, err := auth.NewToken(u.ID)
		if err != nil {
			return err
		}
		now := time.Now()
		err = st.PutToken(ctx, scangate.Token{Hash: auth.HashToken(tok), UserID: u.ID, Kind: "cli", CreatedAt: now, ExpiresAt: now.Add(*ttl)})
		if err != nil {
			return err
		}
		fmt.Fprintln(out, tok)
	case "revoke-token":
		if _, err := auth.ParseToken(*token); err != nil {
			return fmt.Errorf("-token: %w", err)
		}
		ok, err := st.RevokeToken(ctx, auth.HashToken(*token))
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("no such token")
		}
		fmt.Fprintln(out, "token revoked")
	case "revoke-user-tokens":
		u, err := st.UserByName(ctx, *username)
		if err != nil {
			return err
		}
		n, err := st.RevokeUserTokens(ctx, u.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d tokens of %q revoked\n", n, u.Username)
	case "check":
		r, err := st.Check(ctx)
		if err != nil {
			return err
		}
		for _, d := range r.Drift {
			fmt.Fprintln(out, "drift:", d)
		}
		fmt.Fprintf(out, "checked %d scans, %d findings, %d PRs: %d drift\n", r.Scans, r.Findings, r.PRs, len(r.Drift))
		if len(r.Drift) > 0 {
			return fmt.Errorf("%d counts drifted", len(r.Drift))
		}
	default:
		fs.Usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}
