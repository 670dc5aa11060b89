// Command scangate-admin administers a scangate table, deployed or local:
// it creates the table (local endpoints), bootstraps the first admin, issues
// long-lived tokens for CI jobs, revokes tokens and checks the counts.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

const usage = `usage: scangate-admin [-table NAME] [-endpoint URL] COMMAND [flags]

commands:
  create-table                          create the table (DynamoDB Local or another endpoint)
  bootstrap -username U -email E        create the first admin; the password comes from
                                        SCANGATE_ADMIN_PASSWORD or is generated and printed
  issue-token -username U -name N       print a new personal token of U (for CI jobs), as
      [-days 90] [-scope write|read]    POST /auth/tokens makes them
  revoke-token                          revoke the token read from SCANGATE_TOKEN or, when
                                        that is unset, from the first line of standard input
  revoke-user-tokens -username U        revoke every token of U
  check                                 recount every scan from its findings and allowlists
                                        and list any drift (exit status 1 when there is some)

-table defaults to TABLE_NAME, -endpoint to DYNAMODB_ENDPOINT (empty: AWS, with the
usual AWS credentials chain: environment, shared config and SSO profiles, roles).
No command takes a secret on its command line.
`

// env is what a command may use: the table, the store on it and the
// program's input, output and environment.
type env struct {
	db     *dynamodb.Client
	st     *store.Store
	table  string
	in     io.Reader
	out    io.Writer
	getenv func(string) string
}

// commands are the subcommands, each parsing its own flags.
var commands = map[string]func(context.Context, env, []string) error{
	"create-table":       createTable,
	"bootstrap":          bootstrap,
	"issue-token":        issueToken,
	"revoke-token":       revokeToken,
	"revoke-user-tokens": revokeUserTokens,
	"check":              check,
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "scangate-admin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("scangate-admin", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	table := fs.String("table", getenv("TABLE_NAME"), "table name")
	endpoint := fs.String("endpoint", getenv("DYNAMODB_ENDPOINT"), "DynamoDB endpoint URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 || *table == "" {
		fs.Usage()
		return errors.New("a command and a table are required")
	}
	cmd, ok := commands[fs.Arg(0)]
	if !ok {
		fs.Usage()
		return fmt.Errorf("unknown command %q", fs.Arg(0))
	}
	db, err := newClient(ctx, *endpoint, getenv)
	if err != nil {
		return err
	}
	return cmd(ctx, env{db: db, st: store.New(db, *table), table: *table, in: in, out: out, getenv: getenv}, fs.Args()[1:])
}

// newClient builds the DynamoDB client with the SDK's whole default chain
// (profiles, SSO, assumed roles), as a person at a terminal expects, and the
// service's retry policy and HTTP client. A local endpoint without
// credentials gets placeholder ones.
func newClient(ctx context.Context, endpoint string, getenv func(string) string) (*dynamodb.Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRetryer(store.NewRetryer),
		awsconfig.WithHTTPClient(store.NewHTTPClient()),
	}
	if endpoint != "" {
		if getenv("AWS_REGION") == "" && getenv("AWS_DEFAULT_REGION") == "" {
			opts = append(opts, awsconfig.WithRegion("us-east-1"))
		}
		if getenv("AWS_ACCESS_KEY_ID") == "" {
			opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, store.UseEndpoint(endpoint)), nil
}

// parse parses a command's flags, which take no positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", fs.Name(), fs.Args())
	}
	return nil
}

func createTable(ctx context.Context, e env, args []string) error {
	if err := parse(flag.NewFlagSet("create-table", flag.ContinueOnError), args); err != nil {
		return err
	}
	if err := store.CreateTable(ctx, e.db, e.table); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "table %s is ready\n", e.table)
	return nil
}

func bootstrap(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	username := fs.String("username", "", "the admin's username")
	email := fs.String("email", "", "the admin's e-mail address")
	if err := parse(fs, args); err != nil {
		return err
	}
	pw := e.getenv("SCANGATE_ADMIN_PASSWORD")
	generated := pw == ""
	if generated {
		var err error
		if pw, err = password.Generate(); err != nil {
			return err
		}
	}
	u, err := auth.Bootstrap{Store: e.st, Passwords: password.Argon2id{}, Fold: emailfold.Fold, Who: e.who()}.Admin(ctx, *username, *email, pw)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "admin %q created with id %d\n", u.Username, u.ID)
	if generated {
		fmt.Fprintf(e.out, "password (shown once): %s\n", pw)
	}
	return nil
}

func issueToken(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("issue-token", flag.ContinueOnError)
	username := fs.String("username", "", "whose token")
	name := fs.String("name", "", "the token's name, unique for the user ignoring case")
	days := fs.Int64("days", scangate.TokenDaysDefault, "days until it expires (1-366)")
	scope := fs.String("scope", scangate.ScopeWrite, "write; read for GET routes only; scan to record scans and read")
	if err := parse(fs, args); err != nil {
		return err
	}
	nt := scangate.NewToken{Name: *name, Days: *days, Scope: *scope}
	var p scangate.Problems
	nt.Validate(&p)
	if err := p.Err(); err != nil {
		return fmt.Errorf("issue-token: %v", p)
	}
	u, err := e.st.UserByName(ctx, *username)
	if err != nil {
		return err
	}
	if !u.Active {
		return fmt.Errorf("user %q is inactive", u.Username)
	}
	secret, t, err := auth.PersonalTokens{Store: e.st, Now: time.Now, Fold: emailfold.Fold}.Create(ctx, u.ID, nt, e.who())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "token %d %q of %q, %s, expires %s (shown once):\n%s\n", t.ID, t.Name, u.Username, t.Scope,
		scangate.At(t.ExpiresAt), secret)
	return nil
}

// who is the admin CLI as an audit entry names it: no actor, a request id
// of its own.
func (e env) who() scangate.Who {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return scangate.Who{RequestID: "cli-" + hex.EncodeToString(b)}
}

// revokeToken reads the token from SCANGATE_TOKEN or standard input, never
// from the command line, where it would stay in the shell's history and be
// visible to every user of the machine in the process list.
func revokeToken(ctx context.Context, e env, args []string) error {
	if err := parse(flag.NewFlagSet("revoke-token", flag.ContinueOnError), args); err != nil {
		return err
	}
	token := e.getenv("SCANGATE_TOKEN")
	if token == "" {
		line, err := bufio.NewReader(e.in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the token from standard input: %w", err)
		}
		token = line
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return errors.New("no token: set SCANGATE_TOKEN or write it to standard input")
	}
	if _, err := auth.ParseToken(token); err != nil {
		return fmt.Errorf("the token: %w", err)
	}
	if err := e.st.RevokeTokenHash(ctx, auth.HashToken(token), e.who(), time.Now()); err != nil {
		return err
	}
	fmt.Fprintln(e.out, "token revoked")
	return nil
}

func revokeUserTokens(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("revoke-user-tokens", flag.ContinueOnError)
	username := fs.String("username", "", "whose tokens")
	if err := parse(fs, args); err != nil {
		return err
	}
	u, err := e.st.UserByName(ctx, *username)
	if err != nil {
		return err
	}
	n, err := e.st.RevokeUserTokens(ctx, u.ID, e.who(), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "%d tokens of %q revoked\n", n, u.Username)
	return nil
}

func check(ctx context.Context, e env, args []string) error {
	if err := parse(flag.NewFlagSet("check", flag.ContinueOnError), args); err != nil {
		return err
	}
	r, err := e.st.Check(ctx)
	if err != nil {
		return err
	}
	for _, d := range r.Drift {
		fmt.Fprintln(e.out, "drift:", d)
	}
	for _, w := range r.Running {
		fmt.Fprintln(e.out, "running:", w)
	}
	if len(r.Pending) > 0 {
		fmt.Fprintf(e.out, "%d differences the running work is to correct (not drift), the first: %s\n", len(r.Pending), r.Pending[0])
	}
	if r.Unrecorded > 0 {
		fmt.Fprintf(e.out, "%d findings of scans never committed (a recording under way, or one that failed): counted by no scan, not drift\n", r.Unrecorded)
	}
	fmt.Fprintf(e.out, "checked %d scans, %d findings, %d PRs: %d drift\n", r.Scans, r.Findings, r.PRs, len(r.Drift))
	if len(r.Drift) > 0 {
		return fmt.Errorf("%d counts drifted", len(r.Drift))
	}
	return nil
}
