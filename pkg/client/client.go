// Package client is a client of the scangate API for programs that are not
// the service: the command-line client of CI jobs (cmd/scangate). It speaks
// the API's JSON over HTTP with a bearer token and turns the service's
// problem details into errors that keep every pointer. It links nothing of
// the service's own packages.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Client calls one deployment of the API.
type Client struct {
	base      string // the API's base URL, ending in /api, without a trailing slash
	token     string
	http      *http.Client
	userAgent string
	// retryWait is the longest wait for Retry-After between attempts.
	retryWait time.Duration
}

// New returns a client of the API at base (e.g.
// https://example.execute-api.eu-west-1.amazonaws.com/prod/api) that sends
// token as its bearer token, with hc's transport and timeout (nil:
// http.DefaultClient's). It follows no redirect: a 3xx is an error that
// names where it pointed (a *RedirectError), so that the token goes to
// base's origin only and no other server's answer is taken for the
// service's.
func New(base, token, userAgent string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the API's URL %q is not an http(s) URL", base)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	own := *hc
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: &own, userAgent: userAgent, retryWait: 10 * time.Second}, nil
}

// BaseURL is the API's base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// attempts bounds the tries of a request the service answered 429 or 503:
// it says nothing was written (docs/API.md), so a request may be sent again.
const attempts = 3

// Error is a request the service answered with an error status: its
// problem details (RFC 9457) as the service gave them.
type Error struct {
	Method, Path string
	Problem      Problem
}

// Problem is the body of an error answer.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one error of a body (pointer) or a query (parameter).
type FieldError struct {
	Pointer   *string `json:"pointer,omitempty"`
	Parameter string  `json:"parameter,omitempty"`
	Detail    string  `json:"detail"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Method, e.Path, e.Problem)
}

// String writes the problem on one line per error: the status, title and
// detail, then each pointer or parameter with its detail; the service's
// text made Printable.
func (p Problem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", p.Status, Printable(p.Title))
	if p.Detail != "" {
		fmt.Fprintf(&b, ": %s", Printable(p.Detail))
	}
	for _, fe := range p.Errors {
		detail := Printable(fe.Detail)
		switch {
		case fe.Parameter != "":
			fmt.Fprintf(&b, "\n  parameter %s: %s", Printable(fe.Parameter), detail)
		case fe.Pointer != nil && *fe.Pointer == "":
			fmt.Fprintf(&b, "\n  (the whole document): %s", detail)
		case fe.Pointer != nil:
			fmt.Fprintf(&b, "\n  %s: %s", Printable(*fe.Pointer), detail)
		default:
			fmt.Fprintf(&b, "\n  %s", detail)
		}
	}
	return b.String()
}

// redact drops secret from every text of the problem (a server that echoes
// the Authorization header must not have the token printed).
func (p Problem) redact(secret string) Problem {
	p.Type, p.Title, p.Detail = Redact(p.Type, secret), Redact(p.Title, secret), Redact(p.Detail, secret)
	errs := make([]FieldError, len(p.Errors))
	for i, fe := range p.Errors {
		fe.Parameter, fe.Detail = Redact(fe.Parameter, secret), Redact(fe.Detail, secret)
		if fe.Pointer != nil {
			ptr := Redact(*fe.Pointer, secret)
			fe.Pointer = &ptr
		}
		errs[i] = fe
	}
	p.Errors = errs
	return p
}

// RedirectError is a request the service answered with a redirect, which
// the client does not follow.
type RedirectError struct {
	Method, Path string
	Status       int
	Location     string // as the answer gave it, Printable and without the token
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s: the service answered %d %s to %s; scangate follows no redirect "+
		"(its token goes to the API's URL only): set the API's URL to the address that answers",
		e.Method, e.Path, e.Status, http.StatusText(e.Status), orNone(e.Location))
}

func orNone(s string) string {
	if s == "" {
		return "(no Location)"
	}
	return s
}

// StatusOf is the HTTP status of an error the service answered, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem.Status
	}
	return 0
}

// rawSetter is a response that keeps its body as the service sent it, so
// that machine output passes on every field, also those this client does
// not know yet.
type rawSetter interface{ setRaw(json.RawMessage) }

// Raw is embedded by responses that keep their body.
type Raw struct {
	JSON json.RawMessage `json:"-"`
}

func (r *Raw) setRaw(b json.RawMessage) { r.JSON = b }

// request is one call of the API.
type request struct {
	method, path string
	query        url.Values
	body         []byte // JSON; nil for none
}

// call sends r, retrying the answers that say nothing was done (429, 503),
// and decodes a 2xx body into out (when not nil).
func (c *Client) call(ctx context.Context, r request, out any) error {
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, r)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		_ = resp.Body.Close()
		if err != nil {
			return fmt.Errorf("%s %s: reading the answer: %w", r.method, r.path, redact(err))
		}
		if resp.StatusCode/100 == 2 {
			return decode(r, body, out)
		}
		if resp.StatusCode/100 == 3 {
			return &RedirectError{Method: r.method, Path: r.path, Status: resp.StatusCode,
				Location: Printable(Redact(resp.Header.Get("Location"), c.token))}
		}
		if attempt < attempts && (resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests) {
			if err := sleep(ctx, c.backoff(resp, attempt)); err != nil {
				return err
			}
			continue
		}
		return &Error{Method: r.method, Path: r.path, Problem: problemOf(resp, body).redact(c.token)}
	}
}

func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, redact(err))
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &UnreachableError{Base: c.base, Err: redact(err)}
	}
	return resp, nil
}

// UnreachableError is a request that got no answer: the service is down,
// unreachable or too slow.
type UnreachableError struct {
	Base string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the service at %s did not answer: %v", e.Base, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func decode(r request, body []byte, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", r.method, r.path, err)
	}
	if rs, ok := out.(rawSetter); ok {
		rs.setRaw(json.RawMessage(body))
	}
	return nil
}

// problemOf reads an error answer: problem details when it is JSON, else
// the status and the start of the body.
func problemOf(resp *http.Response, body []byte) Problem {
	var p Problem
	if json.Unmarshal(body, &p) != nil || p.Status == 0 {
		p = Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
		if text := strings.TrimSpace(string(body)); text != "" {
			p.Detail = truncate(text, 300)
		}
	}
	return p
}

// backoff is the wait before another attempt: the answer's Retry-After
// (seconds) up to retryWait, else one second and then two.
func (c *Client) backoff(resp *http.Response, attempt int) time.Duration {
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, c.retryWait)
	}
	return min(time.Duration(attempt)*time.Second, c.retryWait)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redact drops the query of a URL an error names: a presigned URL's query
// is a credential (its signature).
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
			u.RawQuery = ""
			return &url.Error{Op: ue.Op, URL: u.String() + "?…", Err: ue.Err}
		}
	}
	return err
}

// truncate keeps at most n bytes of s, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// get and write are call for a read and for a write with a JSON body.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.call(ctx, request{method: http.MethodGet, path: path, query: q}, out)
}

func (c *Client) write(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return c.call(ctx, request{method: method, path: path, body: b}, out)
}
