// Package githubtest is a local stand-in for GitHub's REST API, for tests:
// it validates every request against GitHub's published OpenAPI
// description (the npm package @octokit/openapi, pinned in
// .ci/octokit/package-lock.json) with kin-openapi, records the commit
// statuses posted, and answers them as GitHub does (201 and the status
// object, itself checked against the description). It also answers GET
// /repositories/{repository_id} for the repositories a test adds (AddRepo):
// GitHub serves that route, and go-github calls it (GetByID), but the
// description does not list it, so the stand-in checks it by hand (a
// positive integer id, the token) and answers the members scangate reads.
// Any other request is refused: a path the description does not have is
// 404, a request it does not allow is 422 as GitHub words it, a missing or
// wrong token 401, a check run written with the personal token rather than
// an App installation's 403 (as GitHub answers).
package githubtest

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/golang-jwt/jwt/v4"
)

// DescriptionPath is where make test-github installs GitHub's description
// of api.github.com, relative to the repository's root.
const DescriptionPath = ".build/octokit/node_modules/@octokit/openapi/generated/api.github.com.json"

// EnterprisePrefix is the path under which a GitHub Enterprise Server
// serves the same API; the stand-in serves it there too.
const EnterprisePrefix = "/api/v3"

// description is GitHub's description as loaded once per test binary.
var description struct {
	once sync.Once
	doc  *openapi3.T
	err  error
}

// Start starts, for a test, a stand-in that accepts token, closed when the
// test ends. The description is SCANGATE_GITHUB_OPENAPI's, else the one
// make test-github installs (DescriptionPath under root, the repository's
// root relative to the test); without either the test is skipped.
func Start(t testing.TB, root, token string) *Server {
	t.Helper()
	path := os.Getenv("SCANGATE_GITHUB_OPENAPI")
	if path == "" {
		path = filepath.Join(root, DescriptionPath)
		if _, err := os.Stat(path); err != nil {
			t.Skip("no GitHub description: run make test-github (or set SCANGATE_GITHUB_OPENAPI)")
		}
	}
	description.once.Do(func() { description.doc, description.err = Load(path) })
	if description.err != nil {
		t.Fatal(description.err)
	}
	s, err := New(description.doc, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Load reads a description of GitHub's API (13 MB: load it once per test
// binary and share it; servers do not change it).
func Load(path string) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load GitHub's description %s: %w", path, err)
	}
	return doc, nil
}

// Status is a commit status the stand-in accepted.
type Status struct {
	Owner, Repo, SHA string
	Prefix           string // "" for api.github.com's paths, EnterprisePrefix for a GHES's
	State            string
	Context          string
	Description      string
	TargetURL        string
}

// Refusal is a request the stand-in refused, and why.
type Refusal struct {
	Method, Path string
	Status       int
	Reason       string
}

// Server is a running stand-in.
type Server struct {
	*httptest.Server
	token  string
	router routers.Router

	mu       sync.Mutex
	statuses []Status
	refusals []Refusal
	repos    map[int64][2]string // id -> owner, name
	lookups  int

	app       *app
	minted    map[string]bool // installation tokens answered, all accepted
	exchanges []Exchange
	runs      []CheckRun
	requests  []string // "create" or "update <id>", in order, per check-run request
	failRun   int      // the check-run request to answer 502, counting from 1 (FailCheckRun); 0 for none
}

// FailCheckRun makes the stand-in answer 502 Bad Gateway, as GitHub does
// now and then, without acting on it, to the check-run request that
// comes after the next ok ones.
func (s *Server) FailCheckRun(ok int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failRun = ok + 1
}

// CheckRun is a check run as the stand-in keeps it: its last members and
// every annotation sent to it (GitHub appends each request's).
type CheckRun struct {
	ID                int64
	Owner, Repo, SHA  string
	Name, Status      string
	Conclusion, Title string
	Summary           string
	Annotations       []Annotation
	Updates           int // requests after its creation
}

// Annotation is an annotation the stand-in accepted.
type Annotation struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Level     string `json:"annotation_level"`
	Title     string `json:"title"`
	Message   string `json:"message"`
}

// CheckRuns returns the check runs created, in order.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CheckRun, len(s.runs))
	for i, r := range s.runs {
		r.Annotations = append([]Annotation(nil), r.Annotations...)
		out[i] = r
	}
	return out
}

// CheckRunRequests returns the check-run requests accepted, in order:
// "create", or "update" and the run's id.
func (s *Server) CheckRunRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// app is the GitHub App whose installation tokens the stand-in mints.
type app struct {
	id, installation int64
	key              *rsa.PublicKey
	lifetime         time.Duration
}

// Exchange is an installation token exchange the stand-in answered.
type Exchange struct {
	Installation int64
	Issuer       string // the JWT's iss
	Token        string // the installation token answered
}

// AddApp makes the stand-in mint installation tokens for installation of
// the App id, whose JWTs must be signed by the private key of key (RS256),
// issued by the App (iss its id) and valid now (iat not in the future,
// exp in at most 10 minutes, as GitHub requires). Each token is valid
// for lifetime (an hour at GitHub).
func (s *Server) AddApp(id, installation int64, key *rsa.PublicKey, lifetime time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app = &app{id: id, installation: installation, key: key, lifetime: lifetime}
}

// Exchanges returns the token exchanges answered, in order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// AddRepo makes the stand-in know the repository of id as owner/name.
func (s *Server) AddRepo(id int64, owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos == nil {
		s.repos = map[int64][2]string{}
	}
	s.repos[id] = [2]string{owner, name}
}

// Lookups counts the GET /repositories/{repository_id} answered.
func (s *Server) Lookups() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups
}

// New starts a stand-in that accepts requests authenticated with token.
func New(doc *openapi3.T, token string) (*Server, error) {
	s := &Server{token: token}
	s.Server = httptest.NewUnstartedServer(s)
	base := "http://" + s.Listener.Addr().String()
	own := *doc // the servers are this stand-in's; the rest is shared, read only
	own.Servers = openapi3.Servers{{URL: base}, {URL: base + EnterprisePrefix}}
	router, err := gorillamux.NewRouter(&own)
	if err != nil {
		_ = s.Listener.Close()
		return nil, fmt.Errorf("route GitHub's description: %w", err)
	}
	s.router = router
	s.Start()
	return s, nil
}

// Statuses returns the statuses accepted, in the order they arrived.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses...)
}

// Refusals returns the requests refused, in the order they arrived.
func (s *Server) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refusal(nil), s.refusals...)
}

// ServeHTTP checks a request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, "Problems parsing JSON", err.Error())
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasPrefix(strings.TrimPrefix(r.URL.Path, EnterprisePrefix), "/app/") {
		s.exchange(w, r)
		return
	}
	if !s.authenticated(r) {
		s.refuse(w, r, http.StatusUnauthorized, "Bad credentials", "no token, or not the stand-in's")
		return
	}
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(r.URL.EscapedPath(), EnterprisePrefix), "/repositories/"); ok {
		s.repository(w, r, rest)
		return
	}
	in, params, ok := s.validate(w, r, &openapi3filter.Options{MultiError: true})
	if !ok {
		return
	}
	switch in.Route.Operation.OperationID {
	case "repos/create-commit-status":
		s.createStatus(w, r, in, params, body)
	case "checks/create", "checks/update":
		if !s.installationToken(r) {
			// GitHub lets only a GitHub App write check runs: a personal
			// access token (or an OAuth App's) gets 403.
			s.refuse(w, r, http.StatusForbidden, "Resource not accessible by personal access token", "check runs need an App installation's token, not the personal token")
			return
		}
		s.mu.Lock()
		fail := false
		if s.failRun > 0 {
			s.failRun--
			fail = s.failRun == 0
		}
		s.mu.Unlock()
		if fail {
			s.refuse(w, r, http.StatusBadGateway, "Server Error", "the stand-in fails this check-run request (FailCheckRun)")
			return
		}
		s.checkRun(w, r, in, params, body, in.Route.Operation.OperationID == "checks/create")
	default:
		s.refuse(w, r, http.StatusNotImplemented, "Not Implemented", "the stand-in serves repos/create-commit-status, checks/create and checks/update only, not "+in.Route.Operation.OperationID)
	}
}

// repository answers GET /repositories/{repository_id}: the repository's
// id, name, full name and owner, as GitHub's full repository has them.
func (s *Server) repository(w http.ResponseWriter, r *http.Request, rest string) {
	id, err := strconv.ParseInt(rest, 10, 64)
	switch {
	case r.Method != http.MethodGet:
		s.refuse(w, r, http.StatusNotFound, "Not Found", "GET only")
		return
	case err != nil || id < 1:
		s.refuse(w, r, http.StatusNotFound, "Not Found", "not a repository id: "+rest)
		return
	}
	s.mu.Lock()
	repo, ok := s.repos[id]
	if ok {
		s.lookups++
	}
	s.mu.Unlock()
	if !ok {
		s.refuse(w, r, http.StatusNotFound, "Not Found", "no repository "+rest)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "name": repo[1], "full_name": repo[0] + "/" + repo[1],
		"owner": map[string]any{"login": repo[0], "id": 1, "type": "Organization"}, "private": true})
}

func (s *Server) authenticated(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, scheme := range []string{"Bearer ", "token "} {
		if t, ok := strings.CutPrefix(auth, scheme); ok && (t == s.token || s.minted[t]) {
			return true
		}
	}
	return false
}

// installationToken tells whether a request is authenticated by an
// installation token the stand-in minted (AddApp), not the personal token.
func (s *Server) installationToken(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, scheme := range []string{"Bearer ", "token "} {
		if t, ok := strings.CutPrefix(auth, scheme); ok && s.minted[t] {
			return true
		}
	}
	return false
}

// exchange answers POST /app/installations/{installation_id}/access_tokens
// as GitHub does: the request valid per the description, authenticated by
// a JWT the App signed (its signature checked with the App's public key,
// iss the App's id, iat not in the future, exp after now and at most 10
// minutes after iat), the installation the App's; 201 and a new
// installation token, the answer itself checked against the description.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	a := s.app
	s.mu.Unlock()
	if a == nil {
		s.refuse(w, r, http.StatusNotFound, "Not Found", "the stand-in has no App")
		return
	}
	in, params, ok := s.validate(w, r, &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc})
	if !ok {
		return
	}
	if in.Route.Operation.OperationID != "apps/create-installation-access-token" {
		s.refuse(w, r, http.StatusNotImplemented, "Not Implemented", "the stand-in's App serves apps/create-installation-access-token only, not "+in.Route.Operation.OperationID)
		return
	}
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		s.refuse(w, r, http.StatusUnauthorized, "A JSON web token could not be decoded", "no Bearer JWT")
		return
	}
	var claims jwt.RegisteredClaims
	now := time.Now()
	// The signature, by the App's key and RS256 only; exp after now and iat
	// not after it (RegisteredClaims.Valid).
	_, err := jwt.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) { return a.key, nil },
		jwt.WithValidMethods([]string{"RS256"}))
	switch {
	case err != nil:
		s.refuse(w, r, http.StatusUnauthorized, "A JSON web token could not be decoded", err.Error())
		return
	case claims.Issuer != strconv.FormatInt(a.id, 10):
		s.refuse(w, r, http.StatusUnauthorized, "A JSON web token could not be decoded", "iss "+claims.Issuer+" is not the App's id")
		return
	case claims.IssuedAt == nil || claims.ExpiresAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute:
		s.refuse(w, r, http.StatusUnauthorized, "'Expiration time' claim ('exp') is too far in the future", "exp more than 10 minutes after iat")
		return
	case params["installation_id"] != strconv.FormatInt(a.installation, 10):
		s.refuse(w, r, http.StatusNotFound, "Not Found", "no installation "+params["installation_id"]+" of the App")
		return
	}
	s.mu.Lock()
	token := fmt.Sprintf("ghs_standin%04d", len(s.exchanges)+1)
	if s.minted == nil {
		s.minted = map[string]bool{}
	}
	s.minted[token] = true
	s.exchanges = append(s.exchanges, Exchange{Installation: a.installation, Issuer: claims.Issuer, Token: token})
	s.mu.Unlock()
	answer, _ := json.Marshal(map[string]any{"token": token, "expires_at": now.Add(a.lifetime).UTC().Format(time.RFC3339),
		"permissions": map[string]string{"checks": "write", "statuses": "write", "metadata": "read"}, "repository_selection": "selected"})
	s.answer(w, r, in, http.StatusCreated, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, answer)
}

// validate finds a request's operation in the description and checks the
// request against it, refusing it (404, 422) when it does not match.
func (s *Server) validate(w http.ResponseWriter, r *http.Request, opts *openapi3filter.Options) (*openapi3filter.RequestValidationInput, map[string]string, bool) {
	route, params, err := s.router.FindRoute(r)
	if err != nil {
		s.refuse(w, r, http.StatusNotFound, "Not Found", err.Error())
		return nil, nil, false
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		s.refuse(w, r, http.StatusUnprocessableEntity, "Validation Failed", err.Error())
		return nil, nil, false
	}
	return in, params, true
}

// answer sends a response after checking it against the description.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, in *openapi3filter.RequestValidationInput, status int, h http.Header, answer []byte) {
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: h,
		Body: io.NopCloser(bytes.NewReader(answer)), Options: &openapi3filter.Options{MultiError: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		s.refuse(w, r, http.StatusInternalServerError, "the stand-in's answer does not match GitHub's description", err.Error())
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// createStatus records a valid status and answers with GitHub's status
// object, which must itself match the description.
func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, in *openapi3filter.RequestValidationInput, params map[string]string, body []byte) {
	var req struct {
		State       string  `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	_ = json.Unmarshal(body, &req) // valid: the description's schema said so
	st := Status{Owner: params["owner"], Repo: params["repo"], SHA: params["sha"], State: req.State,
		Context: deref(req.Context, "default"), Description: deref(req.Description, ""), TargetURL: deref(req.TargetURL, "")}
	if strings.HasPrefix(r.URL.Path, EnterprisePrefix+"/") {
		st.Prefix = EnterprisePrefix
	}
	s.mu.Lock()
	s.statuses = append(s.statuses, st)
	id := len(s.statuses)
	s.mu.Unlock()

	answer, err := json.Marshal(statusObject(id, st, req.Description, req.TargetURL))
	if err != nil {
		s.refuse(w, r, http.StatusInternalServerError, "stand-in", err.Error())
		return
	}
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	h.Set("Location", fmt.Sprintf("https://api.github.com/repos/%s/%s/statuses/%s", st.Owner, st.Repo, st.SHA))
	s.answer(w, r, in, http.StatusCreated, h, answer)
}

// checkRun creates or updates a check run (a valid request: the
// description said so) and answers with the check run, checked against
// the description. GitHub takes at most 50 annotations a request.
func (s *Server) checkRun(w http.ResponseWriter, r *http.Request, in *openapi3filter.RequestValidationInput, params map[string]string, body []byte, create bool) {
	var req struct {
		Name       *string `json:"name"`
		HeadSHA    string  `json:"head_sha"`
		Status     *string `json:"status"`
		Conclusion *string `json:"conclusion"`
		Output     *struct {
			Title       string       `json:"title"`
			Summary     string       `json:"summary"`
			Annotations []Annotation `json:"annotations"`
		} `json:"output"`
	}
	_ = json.Unmarshal(body, &req)
	if req.Output != nil && len(req.Output.Annotations) > 50 {
		s.refuse(w, r, http.StatusUnprocessableEntity, "Validation Failed", "more than 50 annotations in one request")
		return
	}
	s.mu.Lock()
	var run *CheckRun
	if create {
		s.runs = append(s.runs, CheckRun{ID: int64(len(s.runs) + 1), Owner: params["owner"], Repo: params["repo"], SHA: req.HeadSHA, Name: deref(req.Name, "")})
		run = &s.runs[len(s.runs)-1]
		s.requests = append(s.requests, "create")
	} else {
		id, _ := strconv.ParseInt(params["check_run_id"], 10, 64)
		if id < 1 || int(id) > len(s.runs) || s.runs[id-1].Owner != params["owner"] || s.runs[id-1].Repo != params["repo"] {
			s.mu.Unlock()
			s.refuse(w, r, http.StatusNotFound, "Not Found", "no check run "+params["check_run_id"]+" in "+params["owner"]+"/"+params["repo"])
			return
		}
		run = &s.runs[id-1]
		run.Updates++
		s.requests = append(s.requests, "update "+params["check_run_id"])
		if req.Name != nil {
			run.Name = *req.Name
		}
	}
	run.Status, run.Conclusion = deref(req.Status, run.Status), deref(req.Conclusion, run.Conclusion)
	if req.Output != nil {
		run.Title, run.Summary = req.Output.Title, req.Output.Summary
		run.Annotations = append(run.Annotations, req.Output.Annotations...)
	}
	cur := *run
	s.mu.Unlock()

	api := "https://api.github.com"
	now := time.Now().UTC().Format(time.RFC3339)
	answer, _ := json.Marshal(map[string]any{
		"id": cur.ID, "node_id": fmt.Sprintf("CR_stand-in-%d", cur.ID), "head_sha": cur.SHA, "name": cur.Name,
		"url":      fmt.Sprintf("%s/repos/%s/%s/check-runs/%d", api, cur.Owner, cur.Repo, cur.ID),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/runs/%d", cur.Owner, cur.Repo, cur.ID), "details_url": nil,
		"status": cur.Status, "conclusion": cur.Conclusion, "started_at": now, "completed_at": now, "external_id": nil,
		"check_suite": map[string]any{"id": 1}, "app": nil, "pull_requests": []any{},
		"output": map[string]any{"title": cur.Title, "summary": cur.Summary, "text": nil, "annotations_count": len(cur.Annotations),
			"annotations_url": fmt.Sprintf("%s/repos/%s/%s/check-runs/%d/annotations", api, cur.Owner, cur.Repo, cur.ID)},
	})
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	s.answer(w, r, in, status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, answer)
}

// statusObject is a status as GitHub answers it.
func statusObject(id int, st Status, description, target *string) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	api := "https://api.github.com"
	return map[string]any{
		"url":         fmt.Sprintf("%s/repos/%s/%s/statuses/%s", api, st.Owner, st.Repo, st.SHA),
		"avatar_url":  "https://avatars.githubusercontent.com/u/1?v=4",
		"id":          id,
		"node_id":     fmt.Sprintf("SC_stand-in-%d", id),
		"state":       st.State,
		"description": description,
		"target_url":  target,
		"context":     st.Context,
		"created_at":  now,
		"updated_at":  now,
		"creator": map[string]any{
			"login": "scangate-bot", "id": 1, "node_id": "U_stand-in", "avatar_url": "https://avatars.githubusercontent.com/u/1?v=4",
			"gravatar_id": "", "url": api + "/users/scangate-bot", "html_url": "https://github.com/scangate-bot",
			"followers_url": api + "/users/scangate-bot/followers", "following_url": api + "/users/scangate-bot/following{/other_user}",
			"gists_url": api + "/users/scangate-bot/gists{/gist_id}", "starred_url": api + "/users/scangate-bot/starred{/owner}{/repo}",
			"subscriptions_url": api + "/users/scangate-bot/subscriptions", "organizations_url": api + "/users/scangate-bot/orgs",
			"repos_url": api + "/users/scangate-bot/repos", "events_url": api + "/users/scangate-bot/events{/privacy}",
			"received_events_url": api + "/users/scangate-bot/received_events", "type": "Bot", "site_admin": false,
		},
	}
}

// refuse records a refused request and answers it as GitHub does.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, message, reason string) {
	s.mu.Lock()
	s.refusals = append(s.refusals, Refusal{Method: r.Method, Path: r.URL.Path, Status: status, Reason: reason})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"message":           message,
		"errors":            []map[string]string{{"message": reason}},
		"documentation_url": "https://docs.github.com/rest",
	})
}

func deref(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}
