package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Scan reads one scan.
func (c *Client) Scan(ctx context.Context, id int64) (Scan, error) {
	var s Scan
	err := c.get(ctx, "/pr/scan/"+strconv.FormatInt(id, 10), nil, &s)
	return s, err
}

// Gate reads a pull request's gate (pr is the service's id of the PR).
func (c *Client) Gate(ctx context.Context, pr int64) (Gate, error) {
	var g Gate
	err := c.get(ctx, "/pr/"+strconv.FormatInt(pr, 10)+"/gate", nil, &g)
	return g, err
}

// ErrNoPR is the error of FindPR when the service holds no scan of the
// pull request.
var ErrNoPR = errors.New("the service has no scan of this pull request")

// FindPR finds the service's record of the pull request number of
// repository repo of integration vc (GET /pr?vc_id=&repo_id=&number=).
func (c *Client) FindPR(ctx context.Context, vc, repo, number int64) (PR, error) {
	q := url.Values{"vc_id": {strconv.FormatInt(vc, 10)}, "repo_id": {strconv.FormatInt(repo, 10)}, "number": {strconv.FormatInt(number, 10)}}
	var p Page[PR]
	if err := c.get(ctx, "/pr", q, &p); err != nil {
		return PR{}, err
	}
	for _, pr := range p.Items {
		if pr.Number == number {
			return pr, nil
		}
	}
	return PR{}, fmt.Errorf("pull request %d of repository %d (vc_id %d): %w", number, repo, vc, ErrNoPR)
}

// PRScans reads every scan of a pull request, newest first.
func (c *Client) PRScans(ctx context.Context, pr int64) ([]Scan, error) {
	return all[Scan](ctx, c, "/pr/"+strconv.FormatInt(pr, 10)+"/scans", url.Values{})
}

// FindingFilter narrows a scan's findings: Unsuppressed keeps those that
// count; BaselineState (new or unchanged) those of that state against the
// pull request's baseline ("" all).
type FindingFilter struct {
	Unsuppressed  bool
	BaselineState string
}

// Findings reads every finding of a scan that f keeps, in the order
// recorded.
func (c *Client) Findings(ctx context.Context, scan int64, f FindingFilter) ([]Finding, error) {
	q := url.Values{}
	if f.Unsuppressed {
		q.Set("suppressed", "false")
	}
	if f.BaselineState != "" {
		q.Set("baseline_state", f.BaselineState)
	}
	return all[Finding](ctx, c, "/pr/scan/"+strconv.FormatInt(scan, 10)+"/findings", q)
}

// all reads every page of a listing.
func all[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	q.Set("limit", "100")
	var items []T
	for {
		var p Page[T]
		if err := c.get(ctx, path, q, &p); err != nil {
			return nil, err
		}
		items = append(items, p.Items...)
		if p.NextCursor == nil {
			return items, nil
		}
		q.Set("cursor", *p.NextCursor)
	}
}

// Allowlists reads one page of allowlists, newest first, with the filters
// and paging of q (type, name, active, limit, cursor).
func (c *Client) Allowlists(ctx context.Context, q url.Values) (Page[Allowlist], error) {
	var p Page[Allowlist]
	err := c.get(ctx, "/whitelist", q, &p)
	return p, err
}

// CreateAllowlist creates an allowlist from body (the members of POST
// /whitelist).
func (c *Client) CreateAllowlist(ctx context.Context, body map[string]any) (AllowlistChange, error) {
	var a AllowlistChange
	err := c.write(ctx, http.MethodPost, "/whitelist", body, &a)
	return a, err
}

// UpdateAllowlist modifies allowlist id with the members of body (those
// absent are left as they are).
func (c *Client) UpdateAllowlist(ctx context.Context, id int64, body map[string]any) (AllowlistChange, error) {
	var a AllowlistChange
	err := c.write(ctx, http.MethodPut, "/whitelist/"+strconv.FormatInt(id, 10), body, &a)
	return a, err
}

// CreateToken creates a personal token of the caller.
func (c *Client) CreateToken(ctx context.Context, r TokenRequest) (Token, error) {
	var t Token
	err := c.write(ctx, http.MethodPost, "/auth/tokens", r, &t)
	return t, err
}

// ExchangeIDToken exchanges a CI job's OpenID Connect id token for a scan
// token of its repository (POST /auth/oidc/token; no bearer token sent).
func (c *Client) ExchangeIDToken(ctx context.Context, idToken string) (CIToken, error) {
	var t CIToken
	err := c.write(ctx, http.MethodPost, "/auth/oidc/token", map[string]string{"id_token": idToken}, &t)
	return t, err
}

// Login logs in with a username and password (POST /auth/token); the
// client's own token, if any, is not sent.
func (c *Client) Login(ctx context.Context, username, password string) (Login, error) {
	var l Login
	body := map[string]string{"username": username, "password": password}
	err := c.write(ctx, http.MethodPost, "/auth/token", body, &l)
	return l, err
}
