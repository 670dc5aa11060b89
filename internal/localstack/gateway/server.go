package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Handler is a REST proxy Lambda handler.
type Handler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// AuthorizerHandler is a TOKEN authorizer Lambda handler.
type AuthorizerHandler func(context.Context, events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// maxPayload is API Gateway's request payload limit (10 MB).
const maxPayload = 10 << 20

// Fake identifiers of the local API, used in method ARNs.
const (
	region  = "us-east-1"
	account = "123456789012"
	apiID   = "local"
)

// Server is the local API Gateway.
type Server struct {
	t          *Template
	functions  map[string]Handler
	authorizer AuthorizerHandler
	ttl        time.Duration
	log        *slog.Logger
	now        func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	resp    events.APIGatewayCustomAuthorizerResponse
	expires time.Time
}

// NewServer wires the template's routes to their functions' handlers. Every
// function with an API route must have a handler, every handler must be a
// function of the template, and the authorizer must be there, so the local
// routing cannot drift from the deployed one. (Functions that API Gateway
// does not invoke, such as event handlers, are not the gateway's.) ttl
// overrides the template's authorizer cache TTL when it is not negative.
func NewServer(t *Template, functions map[string]Handler, authorizer AuthorizerHandler, ttl time.Duration, log *slog.Logger) (*Server, error) {
	for _, r := range t.Routes {
		if _, ok := functions[r.Function]; !ok {
			return nil, fmt.Errorf("the template's function %s (%s %s) has no local handler", r.Function, r.Method, r.Path)
		}
	}
	for id := range functions {
		if !contains(t.Functions, id) {
			return nil, fmt.Errorf("the local handler %s is not a function of the template", id)
		}
	}
	if authorizer == nil {
		return nil, fmt.Errorf("the template's authorizer %s has no local handler", t.Authorizer.Function)
	}
	if ttl < 0 {
		ttl = time.Duration(t.Authorizer.TTL) * time.Second
	}
	return &Server{t: t, functions: functions, authorizer: authorizer, ttl: ttl, log: log, now: time.Now, cache: map[string]cached{}}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// match finds the route of a request path and its path parameters. As on
// API Gateway, the path picks its resource first, a literal segment before
// a {parameter} (GET /users/me before /users/{user_id}), and the method is
// looked up on that resource only: a method the resource does not have is
// no route, even when a less specific resource has it.
func (s *Server) match(method, escapedPath string) (Route, map[string]string, bool) {
	p := escapedPath
	if strings.HasSuffix(p, "/") && s.t.Collections[strings.TrimSuffix(p, "/")] {
		p = strings.TrimSuffix(p, "/")
	}
	segs := strings.Split(p, "/")
	var best []string // the segments of the most specific resource so far
	var found Route
	var foundParams map[string]string
	ok := false
	for _, r := range s.t.Routes {
		rsegs := strings.Split(r.Path, "/")
		params, matches := matchSegments(rsegs, segs)
		if !matches {
			continue
		}
		c := 1
		if best != nil {
			c = moreSpecific(rsegs, best)
		}
		if c < 0 {
			continue
		}
		if c > 0 { // a more specific resource: what a less specific one had does not count
			best, ok = rsegs, false
		}
		if r.Method == method {
			found, foundParams, ok = r, params, true
		}
	}
	if !ok {
		return Route{}, nil, false
	}
	return found, foundParams, true
}

// matchSegments matches a path's segments against a resource's, returning
// the path parameters (nil when there are none).
func matchSegments(rsegs, segs []string) (map[string]string, bool) {
	if len(rsegs) != len(segs) {
		return nil, false
	}
	var params map[string]string
	for i, rs := range rsegs {
		if strings.HasPrefix(rs, "{") && strings.HasSuffix(rs, "}") {
			v, err := url.PathUnescape(segs[i])
			if segs[i] == "" || err != nil {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[rs[1:len(rs)-1]] = v
		} else if rs != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// moreSpecific compares two resources of the same length that match one
// path: at the first segment where one is literal and the other a
// parameter, the literal one is more specific (1: a, -1: b, 0: the same).
func moreSpecific(a, b []string) int {
	for i := range min(len(a), len(b)) {
		pa, pb := strings.HasPrefix(a[i], "{"), strings.HasPrefix(b[i], "{")
		switch {
		case pa && !pb:
			return -1
		case !pa && pb:
			return 1
		}
	}
	return 0
}

// ServeHTTP handles one request as API Gateway and Lambda would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	w.Header().Set("X-Amzn-RequestId", reqID)
	path, escaped := s.apiPath(r)
	route, params, ok := s.match(r.Method, escaped)
	if !ok {
		s.gatewayError(w, "MISSING_AUTHENTICATION_TOKEN", http.StatusForbidden, "Missing Authentication Token")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil {
		s.gatewayError(w, "BAD_REQUEST_BODY", http.StatusBadRequest, "could not read the request body")
		return
	}
	if len(body) > maxPayload {
		s.gatewayError(w, "REQUEST_TOO_LARGE", http.StatusRequestEntityTooLarge, "Request Too Long")
		return
	}
	methodARN := fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s%s", region, account, apiID, s.t.Stage, r.Method, path)
	var authCtx map[string]any
	if route.Auth {
		var status int
		authCtx, status = s.authorize(r.Context(), r.Header.Get(s.t.Authorizer.Header), methodARN)
		switch status {
		case http.StatusUnauthorized:
			s.gatewayError(w, "UNAUTHORIZED", status, "Unauthorized")
			return
		case http.StatusForbidden:
			s.gatewayError(w, "ACCESS_DENIED", status, "User is not authorized to access this resource with an explicit deny")
			return
		case http.StatusInternalServerError:
			s.gatewayError(w, "AUTHORIZER_FAILURE", status, "Internal server error")
			return
		}
	}
	ev := s.event(r, path, route, params, body, reqID, authCtx)
	resp, err := s.functions[route.Function](r.Context(), ev)
	if err != nil {
		s.log.Error("function failed", "function", route.Function, "request_id", reqID, "error", err.Error())
		s.gatewayError(w, "DEFAULT_5XX", http.StatusBadGateway, "Internal server error")
		return
	}
	writeResponse(w, resp)
}

// apiPath is a request's path within the API, plain and escaped. The
// server answers at the root, as behind a custom domain mapped without a
// base path, and under the stage, as on the execute-api domain
// (/prod/api/...): an event's requestContext.path is then the path as the
// client called it, with or without the stage, and path the path within
// the API, as API Gateway sends them.
func (s *Server) apiPath(r *http.Request) (string, string) {
	prefix := "/" + s.t.Stage
	path, escaped := r.URL.Path, r.URL.EscapedPath()
	if s.t.Stage != "" && strings.HasPrefix(escaped, prefix+"/") {
		return strings.TrimPrefix(path, prefix), strings.TrimPrefix(escaped, prefix)
	}
	return path, escaped
}

// event builds the REST proxy event API Gateway would send.
func (s *Server) event(r *http.Request, path string, route Route, params map[string]string, body []byte, reqID string, authCtx map[string]any) events.APIGatewayProxyRequest {
	headers := map[string]string{}
	multi := map[string][]string{}
	for k, vs := range r.Header {
		headers[k] = vs[len(vs)-1]
		multi[k] = vs
	}
	if r.Host != "" {
		headers["Host"], multi["Host"] = r.Host, []string{r.Host}
	}
	var query map[string]string
	var multiQuery map[string][]string
	if q := r.URL.Query(); len(q) > 0 {
		query, multiQuery = map[string]string{}, map[string][]string{}
		for k, vs := range q {
			query[k], multiQuery[k] = vs[len(vs)-1], vs
		}
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := s.now()
	return events.APIGatewayProxyRequest{
		Resource:                        route.Path,
		Path:                            path,
		HTTPMethod:                      r.Method,
		Headers:                         headers,
		MultiValueHeaders:               multi,
		QueryStringParameters:           query,
		MultiValueQueryStringParameters: multiQuery,
		PathParameters:                  params,
		Body:                            string(body),
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID:        account,
			ResourceID:       route.Function,
			Stage:            s.t.Stage,
			RequestID:        reqID,
			Identity:         events.APIGatewayRequestIdentity{SourceIP: ip, UserAgent: r.UserAgent()},
			ResourcePath:     route.Path,
			Path:             r.URL.Path, // as called, stage or not
			Authorizer:       authCtx,
			HTTPMethod:       r.Method,
			RequestTime:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch: now.UnixMilli(),
			APIID:            apiID,
			Protocol:         r.Proto,
		},
	}
}

// authorize runs the TOKEN authorizer (or its cached answer) and evaluates
// the policy for the method. It returns the context to pass on, or the
// status of the refusal.
func (s *Server) authorize(ctx context.Context, token, methodARN string) (map[string]any, int) {
	if v := s.t.Authorizer.Validation; token == "" || v != nil && !v.MatchString(token) {
		return nil, http.StatusUnauthorized // API Gateway refuses it without running the authorizer
	}
	s.mu.Lock()
	c, hit := s.cache[token]
	s.mu.Unlock()
	if !hit || !s.now().Before(c.expires) {
		resp, err := s.authorizer(ctx, events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN", AuthorizationToken: token, MethodArn: methodARN})
		switch {
		case err != nil && err.Error() == "Unauthorized":
			return nil, http.StatusUnauthorized
		case err != nil:
			s.log.Error("authorizer failed", "error", err.Error())
			return nil, http.StatusInternalServerError
		}
		c = cached{resp: resp, expires: s.now().Add(s.ttl)}
		if s.ttl > 0 {
			s.mu.Lock()
			s.cache[token] = c
			s.mu.Unlock()
		}
	}
	if !allowed(c.resp.PolicyDocument, methodARN) {
		return nil, http.StatusForbidden
	}
	authCtx := map[string]any{"principalId": c.resp.PrincipalID, "integrationLatency": 0}
	for k, v := range c.resp.Context {
		authCtx[k] = fmt.Sprint(v)
	}
	return authCtx, 0
}

// allowed evaluates an IAM policy for execute-api:Invoke on the method:
// an explicit Deny wins, and otherwise an Allow is needed.
func allowed(p events.APIGatewayCustomAuthorizerPolicy, methodARN string) bool {
	allow := false
	for _, st := range p.Statement {
		if !anyMatch(st.Action, "execute-api:Invoke") || !anyMatch(st.Resource, methodARN) {
			continue
		}
		switch st.Effect {
		case "Deny":
			return false
		case "Allow":
			allow = true
		}
	}
	return allow
}

func anyMatch(patterns []string, s string) bool {
	for _, p := range patterns {
		if wildcard(p, s) {
			return true
		}
	}
	return false
}

// wildcard matches IAM patterns: * is any run of characters, ? is one.
func wildcard(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && wildcard(pattern[1:], s[1:])
}

// gatewayError answers as the template's GatewayResponse of that type would,
// falling back to DEFAULT_4XX or DEFAULT_5XX and then to API Gateway's own
// {"message": ...}.
func (s *Server) gatewayError(w http.ResponseWriter, typ string, status int, message string) {
	gr, ok := s.t.Responses[typ]
	if !ok {
		def := "DEFAULT_4XX"
		if status >= 500 {
			def = "DEFAULT_5XX"
		}
		gr, ok = s.t.Responses[def]
	}
	if gr.Status != 0 {
		status = gr.Status
	}
	body := fmt.Sprintf(`{"message":%q}`, message)
	w.Header().Set("Content-Type", "application/json")
	if ok {
		for k, v := range gr.Headers {
			w.Header().Set(k, v)
		}
		if gr.Template != "" {
			quoted, _ := json.Marshal(message)
			body = strings.NewReplacer(
				"$context.error.messageString", string(quoted),
				"$context.error.message", string(quoted[1:len(quoted)-1]),
				"$context.error.responseType", typ,
			).Replace(gr.Template)
		}
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func writeResponse(w http.ResponseWriter, resp events.APIGatewayProxyResponse) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(resp.Body); err == nil {
			body = b
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
