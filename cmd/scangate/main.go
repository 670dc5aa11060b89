// Command scangate is the command-line client of the scangate API for CI
// jobs and people: it uploads scanners' SARIF logs for a pull request,
// prints the pull request's gate and exits on it, lists findings, manages
// allowlists and creates personal tokens. It reads the pull request from
// the CI's own environment (GitHub Actions, GitLab CI); flags override.
//
// Exit status: 0 success (not blocked), 1 blocked, 2 a usage error, an
// error of the service, a refused token, a service that does not answer,
// or a command that needs a pull request run outside one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/scangate/scangate/internal/linehash"
	"github.com/scangate/scangate/pkg/client"
)

const usage = `usage: scangate COMMAND [flags] [arguments]

commands:
  upload FILE.sarif...     upload scanners' SARIF logs for the pull request, wait for
                           them to be recorded, print the pull request's gate and exit on it
  gate                     print the pull request's gate; exit 0 not blocked, 1 blocked
  findings                 the findings of the pull request's newest scans (or of --scan)
  allowlist create|update|list
                           manage allowlists
  login --username NAME    log in (the password from a prompt or standard input, never
                           a flag); prints the login token alone on standard output
  token create             create a personal token; prints it, once, on standard output
  version                  the version, commit and date of this build

Run scangate COMMAND --help for a command's flags. Every command takes --json.

environment:
  SCANGATE_URL             the API's base URL, ending in /api (or --url)
  SCANGATE_TOKEN           the bearer token (or --token-stdin: the first line of
                           standard input); never a flag, never printed
  SCANGATE_VC_ID           the version-control integration's id (default 1 on GitHub
                           Actions and elsewhere, 2 on GitLab CI)
  SCANGATE_VC_NAME         its name (default the CI's server host, e.g. github.com)
  SCANGATE_WEBHOOK_ID      the webhook id recorded with the pull request (default 1)
  GitHub Actions: GITHUB_REPOSITORY_ID, GITHUB_REPOSITORY, GITHUB_REF and the event
  payload at GITHUB_EVENT_PATH (pull request number, title, link, head commit).
  GitLab CI: CI_PROJECT_ID, CI_PROJECT_PATH, CI_MERGE_REQUEST_IID, CI_MERGE_REQUEST_TITLE,
  CI_MERGE_REQUEST_PROJECT_URL, CI_COMMIT_SHA (CI_MERGE_REQUEST_SOURCE_BRANCH_SHA when set).

exit status: 0 success, not blocked; 1 blocked; 2 usage, service or connection error,
refused token, or not in a pull request.
`

// Exit statuses.
const (
	exitOK      = 0
	exitBlocked = 1
	exitError   = 2
)

// errBlocked ends a command whose pull request is blocked (exit 1).
var errBlocked = errors.New("blocked")

// usageError is a command line that cannot run (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// app is what a command may use of the process: its input, output,
// environment, files and whether standard error is a terminal.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	readFile       func(string) ([]byte, error)
	terminal       bool // standard error is a terminal (progress bars)
	stdinTerminal  bool // standard input is a terminal (login's prompt)
	readPassword   func() ([]byte, error)
	checkout       *linehash.Checkout // upload's, nil with --no-fingerprints
	// token and base are the client's, once read: no text the command
	// prints holds the token (see redactor), and an error of the service
	// is explained against the URL it went to.
	secret, base string
}

func main() {
	a := app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, readFile: os.ReadFile,
		terminal: term.IsTerminal(int(os.Stderr.Fd())), stdinTerminal: term.IsTerminal(int(os.Stdin.Fd())),
		readPassword: func() ([]byte, error) { return term.ReadPassword(int(os.Stdin.Fd())) }}
	os.Exit(a.run(context.Background(), os.Args[1:]))
}

// commands are the commands, each parsing its own flags.
var commands = map[string]func(*app, context.Context, []string) error{
	"upload":    execute(uploadCommand),
	"gate":      execute(gateCommand),
	"findings":  execute(findingsCommand),
	"allowlist": (*app).allowlist,
	"login":     (*app).login,
	"token":     (*app).token,
	"version":   (*app).version,
}

// command is a command that calls the service: its usage, how many
// arguments it takes (-1: any number), and its setup, which adds its own
// flags and gives what runs it once they are parsed.
type command struct {
	name, synopsis, about string
	maxArgs               int
	setup                 func(a *app, fs *flag.FlagSet, o *common) runFunc
}

// runFunc runs a command with its client, within its --timeout.
type runFunc func(ctx context.Context, c *client.Client, args []string) error

func execute(cmd command) func(*app, context.Context, []string) error {
	return func(a *app, ctx context.Context, argv []string) error { return a.execute(ctx, cmd, argv) }
}

// execute parses a command's flags, common and its own, builds the client
// and runs the command.
func (a *app) execute(ctx context.Context, cmd command, argv []string) error {
	fs := a.newFlags(cmd.name, cmd.synopsis, cmd.about)
	var o common
	o.register(fs)
	run := cmd.setup(a, fs, &o)
	args, err := a.parse(fs, argv, cmd.maxArgs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	c, err := a.client(o)
	if err != nil {
		return err
	}
	return run(ctx, c, args)
}

// run runs the command of args and gives the exit status.
func (a *app) run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(a.stderr, usage)
		return exitError
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(a.stdout, usage)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(a.stderr, "scangate: unknown command %q\n\n%s", name, usage)
		return exitError
	}
	return a.exit(name, cmd(a, ctx, args[1:]))
}

// exit reports a command's error on standard error and gives its status.
func (a *app) exit(name string, err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errBlocked):
		return exitBlocked
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "scangate %s: %s\nRun scangate %s --help for its usage.\n", name, ue.msg, name)
		return exitError
	}
	fmt.Fprintf(a.stderr, "scangate %s: %s%s\n", name, client.Redact(err.Error(), a.secret), a.hint(err))
	return exitError
}

// hint explains an error whose likely cause is the API's URL: one that
// does not end in /api answers 404 (or, on API Gateway, 403) for every
// route.
func (a *app) hint(err error) string {
	status := client.StatusOf(err)
	if a.base == "" || (status != 404 && status != 403) {
		return ""
	}
	if strings.HasSuffix(strings.TrimRight(a.base, "/"), "/api") {
		return ""
	}
	return fmt.Sprintf("\nhint: the API's URL %s does not end in /api; SCANGATE_URL (or --url) is the base URL of the API, e.g. %s/api",
		a.base, strings.TrimRight(a.base, "/"))
}

// redactor writes what it is given with the token replaced: a second
// guard, after the client's, for text of a server that echoes it.
type redactor struct {
	w     io.Writer
	token string
}

func (r redactor) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, client.Redact(string(p), r.token)); err != nil {
		return 0, err
	}
	return len(p), nil
}
