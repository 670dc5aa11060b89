package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scangate/scangate/pkg/client"
)

const allowlistUsage = `usage: scangate allowlist create|update|list [flags]

  create        create an allowlist: findings of its type and name (in its repositories,
                integrations and paths, or everywhere with --global) stop counting
  update ID     change an allowlist: only the flags given change it
  list          list allowlists, newest first

Run scangate allowlist COMMAND --help for its flags.
`

func (a *app) allowlist(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return usagef("allowlist needs a command: create, update or list")
	}
	switch argv[0] {
	case "create":
		return a.execute(ctx, allowlistCreate, argv[1:])
	case "update":
		return a.execute(ctx, allowlistUpdate, argv[1:])
	case "list":
		return a.execute(ctx, allowlistList, argv[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(a.stdout, allowlistUsage)
		return flag.ErrHelp
	}
	return usagef("unknown allowlist command %q: create, update or list", argv[0])
}

// ruleFlags are the members of an allowlist that its flags set.
type ruleFlags struct {
	typ, name, reason, expires, comment string
	global, active                      bool
	repos, vcs                          idList
	paths                               stringList
}

func (r *ruleFlags) register(fs *flag.FlagSet, update bool) {
	fs.StringVar(&r.typ, "type", "", "SECRET or VULNERABILITY")
	fs.StringVar(&r.name, "name", "", "the finding's name it covers: a secret's sha256:<hex of its value>, an advisory id (CVE-..., GHSA-...) or a rule id")
	fs.BoolVar(&r.global, "global", false, "cover every repository and integration")
	fs.BoolVar(&r.active, "active", true, "whether it suppresses anything (--active=false to switch it off)")
	fs.Var(&r.repos, "repo", "a repository id it covers (repeat for more; on update, replaces the list)")
	fs.Var(&r.vcs, "vc", "a version-control integration id it covers (repeat for more; on update, replaces the list)")
	fs.Var(&r.paths, "path", "a glob of the paths it covers, e.g. 'test/**' (repeat for more)")
	fs.StringVar(&r.reason, "reason", "", "false_positive, used_in_tests, accepted_risk, wont_fix or revoked")
	expires := "when it ends: an RFC 3339 time, or a time from now such as 30d or 12h"
	if update {
		expires += ", or never"
	}
	fs.StringVar(&r.expires, "expires", "", expires)
	fs.StringVar(&r.comment, "comment", "", "a comment (on update, added to its comments)")
}

// body is the request's members: on create every flag with a value, on
// update only the flags given.
func (r *ruleFlags) body(fs *flag.FlagSet, update bool, now time.Time) (map[string]any, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	b := map[string]any{}
	set := func(flag, member string, v any) {
		if given[flag] {
			b[member] = v
		}
	}
	set("type", "type", r.typ)
	set("name", "name", r.name)
	set("global", "global_", r.global)
	set("active", "active", r.active)
	set("repo", "repos", []int64(r.repos))
	set("vc", "vcs", []int64(r.vcs))
	set("path", "paths", []string(r.paths))
	set("reason", "reason", r.reason)
	set("comment", "comment", r.comment)
	if given["expires"] {
		at, err := expiry(r.expires, update, now)
		if err != nil {
			return nil, err
		}
		b["expires_at"] = at
	}
	if !update && (r.typ == "" || r.name == "") {
		return nil, usagef("create needs --type and --name")
	}
	if update && len(b) == 0 {
		return nil, usagef("update changes nothing: give at least one flag")
	}
	return b, nil
}

// expiry reads --expires: an RFC 3339 time, a time from now (30d, 12h), or
// never (update only).
func expiry(s string, update bool, now time.Time) (string, error) {
	if update && s == "never" {
		return s, nil
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return s, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return now.UTC().AddDate(0, 0, n).Format(time.RFC3339), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.UTC().Add(d).Format(time.RFC3339), nil
	}
	return "", usagef("--expires %q is neither an RFC 3339 time nor a time from now such as 30d or 12h", s)
}

var (
	allowlistCreate = command{name: "allowlist create", synopsis: "--type T --name N [flags]",
		about: "Creates an allowlist. The answer counts the findings it covers: they stop counting before it answers (over 10,000, they are re-evaluated in the background and the answer names the re-evaluation).\n",
		setup: func(a *app, fs *flag.FlagSet, o *common) runFunc { return a.allowlistWrite(fs, o, false) }}
	allowlistUpdate = command{name: "allowlist update", synopsis: "ID [flags]", maxArgs: 1,
		about: "Changes allowlist ID: only the flags given change it. The answer counts the findings the change judges anew.\n",
		setup: func(a *app, fs *flag.FlagSet, o *common) runFunc { return a.allowlistWrite(fs, o, true) }}
	allowlistList = command{name: "allowlist list", synopsis: "[flags]", about: "Lists allowlists, newest first, one page at a time.\n",
		setup: (*app).allowlistListSetup}
)

func (a *app) allowlistWrite(fs *flag.FlagSet, o *common, update bool) runFunc {
	var r ruleFlags
	r.register(fs, update)
	return func(ctx context.Context, c *client.Client, args []string) error {
		var id int64
		if update {
			var err error
			if len(args) != 1 {
				return usagef("update needs the allowlist's id")
			}
			if id, err = strconv.ParseInt(args[0], 10, 64); err != nil || id <= 0 {
				return usagef("the allowlist id %q is not a positive integer", args[0])
			}
		}
		body, err := r.body(fs, update, time.Now())
		if err != nil {
			return err
		}
		var ch client.AllowlistChange
		verb := "created"
		if update {
			ch, err = c.UpdateAllowlist(ctx, id, body)
			verb = "updated"
		} else {
			ch, err = c.CreateAllowlist(ctx, body)
		}
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(a.stdout, ch.JSON)
		}
		if r := ch.Reevaluation; r != nil {
			many := "its findings are"
			if r.Findings != nil {
				many = count(*r.Findings, "finding is", "findings are")
			}
			_, err = fmt.Fprintf(a.stdout, "allowlist %d %s (%s %s): %s re-evaluated in the background (GET /api/reevaluations/%d counts them once complete)\n",
				ch.ID, verb, printable(ch.Type), printable(ch.Name), many, r.ID)
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "allowlist %d %s (%s %s): %s and %s judged anew\n",
			ch.ID, verb, printable(ch.Type), printable(ch.Name), count(ch.SecretsUpdated, "secret", "secrets"),
			count(ch.VulnerabilitiesUpdated, "vulnerability", "vulnerabilities"))
		return err
	}
}

func (a *app) allowlistListSetup(fs *flag.FlagSet, o *common) runFunc {
	filters := map[string]*string{
		"type":   fs.String("type", "", "only this type: SECRET or VULNERABILITY"),
		"name":   fs.String("name", "", "only this name (matched as suppression matches it)"),
		"active": fs.String("active", "", "only active (true) or inactive (false) ones"),
		"cursor": fs.String("cursor", "", "continue after the page that gave this cursor"),
	}
	limit := fs.Int("limit", 50, "at most this many (1-100)")
	return func(ctx context.Context, c *client.Client, _ []string) error {
		q := url.Values{"limit": {strconv.Itoa(*limit)}}
		for k, v := range filters {
			if *v != "" {
				q.Set(k, *v)
			}
		}
		p, err := c.Allowlists(ctx, q)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(a.stdout, p.JSON)
		}
		return a.printAllowlists(p)
	}
}

func (a *app) printAllowlists(p client.Page[client.Allowlist]) error {
	t := newTable(a.stdout, "ID", "TYPE", "NAME", "ACTIVE", "COVERS", "PATHS", "REASON", "EXPIRES")
	for _, l := range p.Items {
		t.row(itoa(l.ID), l.Type, l.Name, yesNo(l.Active), scope(l), orDash(strings.Join(l.Paths, " ")),
			orDash(deref(l.Reason)), expires(l))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if p.NextCursor != nil {
		fmt.Fprintf(a.stderr, "more: scangate allowlist list --cursor %s\n", printable(*p.NextCursor))
	}
	return nil
}

// scope says where an allowlist applies.
func scope(l client.Allowlist) string {
	if l.Global {
		return "everywhere"
	}
	var parts []string
	for _, r := range l.Repos {
		parts = append(parts, "repo "+itoa(r))
	}
	for _, v := range l.Vcs {
		parts = append(parts, "vc "+itoa(v))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ",")
}

func expires(l client.Allowlist) string {
	switch {
	case l.Expired:
		return "expired " + deref(l.ExpiresAt)
	case l.ExpiresAt != nil:
		return *l.ExpiresAt
	}
	return "never"
}

// idList is a flag that may be repeated: a list of positive integers.
type idList []int64

func (l *idList) String() string { return fmt.Sprint([]int64(*l)) }

func (l *idList) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a positive integer", s)
	}
	*l = append(*l, n)
	return nil
}

// stringList is a flag that may be repeated: a list of strings.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
