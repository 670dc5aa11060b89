// Package api adapts scangate's operations to API Gateway REST proxy events:
// it checks callers' roles, decodes and validates bodies, and answers with
// JSON or RFC 9457 problem details. Each handler is a plain function of
// (ctx, events.APIGatewayProxyRequest), run alike by Lambda and by the local
// server.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/problem"
	"github.com/scangate/scangate/internal/scangate"
)

// Handler is the signature Lambda and the local server both run.
type Handler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// Reply is a successful answer.
type Reply struct {
	Status   int
	Body     any
	Location string
	// Headers are further headers of the answer (a listing's Link).
	Headers map[string]string
	// Raw, when set, is the body as it is sent (its Content-Type in
	// Headers), in place of Body.
	Raw []byte
	// Secret marks a body that carries a credential (a token, a presigned
	// upload URL): it is sent
	// with Cache-Control: no-store and Pragma: no-cache, so that no cache
	// keeps it (RFC 6749 section 5.1).
	Secret bool
}

// location is the path of the record id created in collection (such as
// "/users"): the path the request was sent to, as the client called it
// (RequestContext.Path keeps the stage, /prod/api/users, or a custom
// domain's base path), with the id appended. An event without that path
// falls back to Path, then to the API's own base path.
func location(req events.APIGatewayProxyRequest, collection string, id int64) string {
	for _, p := range []string{req.RequestContext.Path, req.Path} {
		if p = strings.TrimSuffix(p, "/"); strings.HasSuffix(p, "/api"+collection) {
			return p + "/" + strconv.FormatInt(id, 10)
		}
	}
	return "/api" + collection + "/" + strconv.FormatInt(id, 10)
}

// apiLocation is the path of record id of collection beside the request's
// own routes: the request's path up to its /api, then collection and id
// (PUT /prod/api/whitelist/7 names /prod/api/reevaluations/5).
func apiLocation(req events.APIGatewayProxyRequest, collection string, id int64) string {
	for _, p := range []string{req.RequestContext.Path, req.Path} {
		if i := strings.LastIndex(p, "/api/"); i >= 0 {
			return p[:i] + "/api" + collection + "/" + strconv.FormatInt(id, 10)
		}
	}
	return "/api" + collection + "/" + strconv.FormatInt(id, 10)
}

// Endpoint is one operation: its name for logs, the roles that may call it
// (none: no caller needed) and its work.
type Endpoint struct {
	Name  string
	Roles []scangate.Role
	// Users, set on operations that write, is read for the token the
	// request presents and its user's current record before the work
	// runs: the authorizer's answer is cached, so the token may have been
	// revoked since, and the role and active flag it carries may be stale.
	Users AuthorityStore
	// Now is the clock a token's expiry is checked against (time.Now when
	// nil).
	Now func() time.Time
	// ReadScope lets a read token call an operation that writes (logging
	// out revokes the token it carries), and a scan token too.
	ReadScope bool
	// ScanScope lets a scan token (a CI job's) call an operation that
	// writes: recording scans.
	ScanScope bool
	// RepoScope lets a token scoped to repositories call the operation:
	// recording scans and reading scans, PRs, gates and findings, each of
	// which then checks the repository (mayRecord, mayRead). Such a token
	// is 403 on every other operation.
	RepoScope bool
	Log       *slog.Logger
	Run       func(context.Context, scangate.Caller, events.APIGatewayProxyRequest) (Reply, error)
}

// CallerStore reads a caller's current user record (strongly consistent).
type CallerStore interface {
	User(ctx context.Context, id int64) (scangate.User, error)
}

// AuthorityStore reads what a write is checked against: a token, by the
// SHA-256 of its secret, and the user it names, in one strongly consistent
// round trip (a nil for either that does not exist).
type AuthorityStore interface {
	TokenUser(ctx context.Context, hash string, userID int64) (*scangate.Token, *scangate.User, error)
}

// Handle runs the endpoint and never returns an error to Lambda: every
// failure is answered with problem details and logged once.
func (e Endpoint) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	start := time.Now()
	caller, hasCaller := callerOf(req)
	reply, err := e.run(ctx, caller, hasCaller, req)
	var resp events.APIGatewayProxyResponse
	switch {
	case err == nil && reply.Status == http.StatusNoContent:
		resp = events.APIGatewayProxyResponse{StatusCode: reply.Status, Headers: map[string]string{}}
	case err == nil:
		resp = jsonResponse(reply.Status, reply.Body)
		if reply.Raw != nil {
			resp.Body = string(reply.Raw)
		}
		if reply.Location != "" {
			resp.Headers["Location"] = reply.Location
		}
		for k, v := range reply.Headers {
			resp.Headers[k] = v
		}
		if reply.Secret {
			resp.Headers["Cache-Control"] = "no-store"
			resp.Headers["Pragma"] = "no-cache"
		}
	default:
		resp = problemResponse(err)
	}
	took := time.Since(start)
	route := routeOf(e.Name, req)
	attrs := []any{
		"request_id", req.RequestContext.RequestID,
		"operation", e.Name,
		"route", route,
		"status", resp.StatusCode,
		"duration_ms", took.Milliseconds(),
	}
	if hasCaller {
		attrs = append(attrs, "user_id", caller.ID)
	}
	switch {
	case scangate.KindOf(err) == scangate.KindGone:
		// The caller went away (the local server cancels the request's
		// context); nobody reads the answer and nothing failed.
		e.Log.InfoContext(ctx, "request abandoned: the client went away", attrs...)
	case resp.StatusCode >= 500:
		e.Log.ErrorContext(ctx, "request failed", append(attrs, "error", err.Error())...)
	case err != nil:
		e.Log.InfoContext(ctx, "request refused", append(attrs, "detail", publicDetail(err))...)
	default:
		e.Log.InfoContext(ctx, "request", attrs...)
	}
	if scangate.KindOf(err) != scangate.KindGone {
		metrics.New(e.Log).Emit(ctx, []metrics.Dim{{Name: metrics.DimRoute, Value: route}, {Name: metrics.DimStatusClass, Value: metrics.StatusClass(resp.StatusCode)}},
			metrics.CountOf(metrics.Requests, 1), metrics.Millis(metrics.Latency, took))
	}
	return resp, nil
}

// routeOf is a request's route for logs and metrics: its method and the
// resource template it matched (GET /api/users/{id}), never its path,
// whose ids would make every request a metric of its own; the operation's
// name when the event names no resource.
func routeOf(name string, req events.APIGatewayProxyRequest) string {
	if req.Resource == "" || req.HTTPMethod == "" {
		return name
	}
	return req.HTTPMethod + " " + req.Resource
}

func (e Endpoint) run(ctx context.Context, c scangate.Caller, hasCaller bool, req events.APIGatewayProxyRequest) (Reply, error) {
	if len(e.Roles) > 0 && !hasCaller {
		return Reply{}, scangate.Errorf(scangate.KindUnauthorized, "a bearer token is required")
	}
	if e.Users != nil && hasCaller {
		// The contract's order, 401 before 403: whether the token may
		// still act is read before its scope and its role are judged.
		current, err := e.currentCaller(ctx, c, req)
		if err != nil {
			return Reply{}, err
		}
		c = current
	}
	switch {
	case e.Users != nil && hasCaller && c.Scope == scangate.ScopeScan && !e.ScanScope && !e.ReadScope:
		return Reply{}, scangate.Errorf(scangate.KindForbidden, "a scan token may only record scans and read; not call %s", e.Name)
	case len(e.Roles) > 0 && !c.Allowed(e.Roles...):
		return Reply{}, scangate.Errorf(scangate.KindForbidden, "the role %s may not call %s", c.Role, e.Name)
	case e.Users != nil && hasCaller && c.Scope == scangate.ScopeRead && !e.ReadScope:
		return Reply{}, scangate.Errorf(scangate.KindForbidden, "a read token may not call %s", e.Name)
	case hasCaller && c.Repos != nil && !e.RepoScope:
		return Reply{}, scangate.Errorf(scangate.KindForbidden, "a token scoped to repositories may not call %s", e.Name)
	}
	return e.Run(ctx, c, req)
}

// currentCaller checks a writing caller as it is now, whatever the
// authorizer's cached answer says: the token the request presents (in its
// Authorization header; its key is the SHA-256 of the secret) and the
// caller's user record, read together in one strongly consistent
// BatchGetItem. No condition inside the write's transaction: that would
// make one caller's parallel writes collide. The token must be the one the
// authorizer answered for, neither revoked nor expired, of an active user
// not deactivated since it was issued (401 otherwise). It returns the
// caller with its current role.
func (e Endpoint) currentCaller(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (scangate.Caller, error) {
	token, ok := auth.BearerToken(header(req, "Authorization"))
	if !ok {
		return scangate.Caller{}, scangate.Errorf(scangate.KindUnauthorized, "a bearer token is required")
	}
	tok, u, err := e.Users.TokenUser(ctx, auth.HashToken(token), c.ID)
	if err != nil {
		return scangate.Caller{}, err
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	if reason := auth.Refusal(tok, u, c.ID, now()); reason != "" {
		return scangate.Caller{}, scangate.Errorf(scangate.KindUnauthorized, "the token may not write: %s", reason)
	}
	if c.TokenID != 0 && tok.ID != c.TokenID {
		return scangate.Caller{}, scangate.Errorf(scangate.KindUnauthorized, "the token may not write: not the token the request was authorized with")
	}
	c.IssuedAt, c.TokenID, c.TokenHash, c.Repos = tok.CreatedAt, tok.ID, tok.Hash, tok.Repos
	return c.Current(*u)
}

// callerOf reads the caller the authorizer put in the request context.
func callerOf(req events.APIGatewayProxyRequest) (scangate.Caller, bool) {
	a := req.RequestContext.Authorizer
	if a == nil {
		return scangate.Caller{}, false
	}
	var id int64
	switch v := a["user_id"].(type) {
	case string:
		id, _ = strconv.ParseInt(v, 10, 64)
	case float64:
		id = int64(v)
	}
	role, _ := a["role"].(string)
	name, _ := a["username"].(string)
	if id < 1 || role == "" {
		return scangate.Caller{}, false
	}
	c := scangate.Caller{ID: id, Username: name, Role: scangate.Role(role), Scope: scangate.ScopeWrite}
	if ms, ok := contextInt(a, "issued_at"); ok {
		c.IssuedAt = time.UnixMilli(ms)
	}
	c.TokenID, _ = contextInt(a, "token_id")
	if s, _ := a["scope"].(string); s == scangate.ScopeRead || s == scangate.ScopeScan {
		c.Scope = s
	}
	if s, ok := a["repos"].(string); ok {
		// A scoped token's: whatever the text, it never widens to every
		// repository.
		repos, ok := scangate.ParseRepos(s)
		if !ok || repos == nil {
			repos = []scangate.RepoRef{}
		}
		c.Repos = repos
	}
	return c, true
}

// mayRecord is the check of a write that records for a repository (a
// scan of a pull request or of a branch, inline, SARIF or an upload): a
// token scoped to repositories may record for those only (403). Call it
// once the body names the repository, on the caller the write check
// answered (Endpoint.Users): its repositories are then the stored
// token's, read in that same round trip.
func mayRecord(c scangate.Caller, vcID, repoID int64) error {
	if !c.Reaches(vcID, repoID) {
		return scangate.Errorf(scangate.KindForbidden, "the token may not record scans of repository %d of version-control system %d", repoID, vcID)
	}
	return nil
}

// mayRead is the check of a read of a record of a repository (a scan, a
// PR, its gate, findings, an upload): for a token scoped to other
// repositories the record is absent, notFound (404, the answer of an id
// nothing has), with no round trip of its own.
func mayRead(c scangate.Caller, vcID, repoID int64, notFound string, args ...any) error {
	if !c.Reaches(vcID, repoID) {
		return scangate.Errorf(scangate.KindNotFound, notFound, args...)
	}
	return nil
}

// getOne is e answering the GET of one record by the id its path names
// (param): read it, check (when check is not nil) that the caller may see
// it, answer 200 with its view.
func getOne[T, V any](e Endpoint, param string, read func(context.Context, int64) (T, error), check func(scangate.Caller, T, int64) error, view func(T) V) Endpoint {
	e.Run = func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
		id, err := PathID(req, param)
		if err != nil {
			return Reply{}, err
		}
		v, err := read(ctx, id)
		if err == nil && check != nil {
			err = check(c, v, id)
		}
		if err != nil {
			return Reply{}, err
		}
		return Reply{Status: http.StatusOK, Body: view(v)}, nil
	}
	return e
}

// inRepo is getOne's check of a record of a repository (mayRead):
// notFound takes the id.
func inRepo[T interface{ Repo() scangate.RepoRef }](notFound string) func(scangate.Caller, T, int64) error {
	return func(c scangate.Caller, v T, id int64) error {
		r := v.Repo()
		return mayRead(c, r.VcID, r.RepoID, notFound, id)
	}
}

// contextInt reads a number the authorizer put in the context (API
// Gateway passes every value as a string).
func contextInt(a map[string]any, name string) (int64, bool) {
	switch v := a[name].(type) {
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	case float64:
		return int64(v), true
	}
	return 0, false
}

// whoOf is who makes a change through the API, for its audit entry: the
// caller and its token, and the request.
func whoOf(c scangate.Caller, req events.APIGatewayProxyRequest) scangate.Who {
	return scangate.Who{Actor: c.Actor(), RequestID: req.RequestContext.RequestID, SourceIP: req.RequestContext.Identity.SourceIP}
}

// anonymousWho is whoOf a request that presents no token yet (a login, a
// sign-in, an exchange): no actor.
func anonymousWho(req events.APIGatewayProxyRequest) scangate.Who {
	return scangate.Who{RequestID: req.RequestContext.RequestID, SourceIP: req.RequestContext.Identity.SourceIP}
}

// bearerBody is the answer of a token issued: the token, a bearer one,
// and how many seconds it lives.
func bearerBody(token string, ttl time.Duration) tokenBody {
	return tokenBody{AccessToken: token, TokenType: "Bearer", ExpiresIn: int64(ttl.Seconds())}
}

// publicDetail is what a caller may be told about err: an httpError's
// detail, else problem.PublicDetail's.
func publicDetail(err error) string {
	var he *httpError
	if errors.As(err, &he) {
		return he.detail
	}
	return problem.PublicDetail(err)
}

// problemOf is the problem details err is answered with: an httpError's
// own status and detail, else those of its kind (problem.Of).
func problemOf(err error) scangate.Problem {
	var he *httpError
	if errors.As(err, &he) {
		return problem.With(he.status, he.detail, nil)
	}
	return problem.Of(err)
}

// problemResponse answers err: its problem details with the headers its
// kind calls for (Retry-After, WWW-Authenticate, an httpError's own).
func problemResponse(err error) events.APIGatewayProxyResponse {
	p := problemOf(err)
	status := p.Status
	var he *httpError
	errors.As(err, &he)
	var retryAfter time.Duration
	var de *scangate.Error
	if he == nil && errors.As(err, &de) {
		retryAfter = de.RetryAfter
	}
	resp := jsonResponse(status, p)
	resp.Headers["Content-Type"] = "application/problem+json"
	if he != nil {
		for k, v := range he.headers {
			resp.Headers[k] = v
		}
	}
	if retryAfter > 0 {
		resp.Headers["Retry-After"] = strconv.Itoa(int(math.Ceil(retryAfter.Seconds())))
	}
	if status == http.StatusUnauthorized {
		resp.Headers["WWW-Authenticate"] = `Bearer realm="scangate"`
	}
	return resp
}

func jsonResponse(status int, body any) events.APIGatewayProxyResponse {
	b, err := marshal(body)
	if err != nil {
		// Only a bug can get here: every body is a plain struct.
		b = []byte(fmt.Sprintf(`{"type":"about:blank","title":"Internal Server Error","status":500,"detail":%q}`, "encode response"))
		status = http.StatusInternalServerError
	}
	return events.APIGatewayProxyResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       strings.TrimSuffix(string(b), "\n"),
	}
}
