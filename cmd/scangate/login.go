package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scangate/scangate/pkg/client"
)

const loginAbout = `Logs in with a username and its password (POST /auth/token) and prints the login
token, and nothing else, on standard output: pipe it to a command that reads a token
(scangate token create --token-stdin ...) or keep it in a file of yours. The password
is asked for without echo when standard input is a terminal, else read from the first
line of standard input; there is no flag for it (a flag shows in the process list and
the shell's history). No token is sent (SCANGATE_TOKEN is not read).
`

func (a *app) login(ctx context.Context, argv []string) error {
	fs := a.newFlags("login", "--username NAME [flags]", loginAbout)
	url := fs.String("url", "", "the API's base URL, ending in /api (default $SCANGATE_URL)")
	username := fs.String("username", "", "the user to log in as")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	if _, err := a.parse(fs, argv, 0); err != nil {
		return err
	}
	if *username == "" {
		return usagef("login needs --username")
	}
	base, err := a.baseURL(*url)
	if err != nil {
		return err
	}
	password, err := a.password(*username, base)
	if err != nil {
		return err
	}
	c, err := client.New(base, "", "scangate-cli/"+buildInfo().Version, nil)
	if err != nil {
		return err
	}
	a.base = base
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	l, err := c.Login(ctx, *username, password)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.stdout, client.Printable(l.AccessToken))
	return err
}

// password reads the password: at a terminal after a prompt on standard
// error, without echo; else the first line of standard input.
func (a *app) password(username, base string) (string, error) {
	if a.stdinTerminal {
		fmt.Fprintf(a.stderr, "password for %s at %s: ", username, base)
		b, err := a.readPassword()
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the password: %w", err)
		}
		if len(b) == 0 {
			return "", usagef("no password given")
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		if err != nil {
			return "", usagef("no password on standard input (its first line is the password)")
		}
		return "", usagef("no password: the first line of standard input is empty")
	}
	return line, nil
}
