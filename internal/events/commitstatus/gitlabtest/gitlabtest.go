// Package gitlabtest is a local stand-in for the parts of GitLab's REST
// API (v4) that scangate calls, for tests, checked as GitLab's API
// documentation describes them: commit statuses (POST
// /projects/:id/statuses/:sha) and merge request notes (POST
// /projects/:id/merge_requests/:iid/notes, PUT .../notes/:note_id). It
// serves under /api/v4 the projects and merge requests a test adds, with
// the token in PRIVATE-TOKEN; a request body must be a JSON object of the
// documented attributes only (anything else is 400, as a test wants to
// hear of it), a required attribute missing is 400, an unknown project,
// merge request or note 404, a wrong token 401. A status set again to the
// state it has is refused with 400 "Cannot transition status", as GitLab
// does. Every request and answer is recorded.
package gitlabtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Prefix is the path of the API's root on the stand-in.
const Prefix = "/api/v4"

// MaxNoteBody is the longest note GitLab takes, in characters.
const MaxNoteBody = 1000000

// Status is a commit status the stand-in accepted.
type Status struct {
	Project                               int64
	SHA, State, Name, Description, Target string
}

// Note is a merge request note as the stand-in keeps it.
type Note struct {
	ID, Project, MR int64
	Body            string
	Edits           int // PUTs after its creation
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
	token string

	mu       sync.Mutex
	projects map[int64]map[int64]bool // project -> its merge requests' iids
	statuses []Status
	state    map[string]string // project/name@sha -> state
	notes    []Note            // by id - 1; a deleted one has ID 0
	requests []string
	refusals []Refusal
}

// Start starts a stand-in that accepts token, closed when the test ends.
func Start(t testing.TB, token string) *Server {
	t.Helper()
	s := &Server{token: token, projects: map[int64]map[int64]bool{}, state: map[string]string{}}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// API is the URL of the API's root, for an integration's api_url.
func (s *Server) API() string { return s.URL + Prefix }

// AddMergeRequest makes the stand-in know the project of id and its merge
// request of iid.
func (s *Server) AddMergeRequest(project, iid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[project] == nil {
		s.projects[project] = map[int64]bool{}
	}
	s.projects[project][iid] = true
}

// AddProject makes the stand-in know the project of id.
func (s *Server) AddProject(project int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[project] == nil {
		s.projects[project] = map[int64]bool{}
	}
}

// DeleteNote deletes a note, as a person may in GitLab's interface.
func (s *Server) DeleteNote(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id >= 1 && int(id) <= len(s.notes) {
		s.notes[id-1] = Note{}
	}
}

// Statuses returns the statuses accepted, in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses...)
}

// Notes returns the notes that exist, by id.
func (s *Server) Notes() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	for _, n := range s.notes {
		if n.ID != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Requests returns the requests accepted, in order, as "METHOD path"
// (the path under Prefix).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Refusals returns the requests refused, in order.
func (s *Server) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refusal(nil), s.refusals...)
}

var (
	statusPath = regexp.MustCompile(`^` + Prefix + `/projects/([1-9][0-9]*)/statuses/([0-9a-f]{40}|[0-9a-f]{64})$`)
	notesPath  = regexp.MustCompile(`^` + Prefix + `/projects/([1-9][0-9]*)/merge_requests/([1-9][0-9]*)/notes(?:/([1-9][0-9]*))?$`)
)

// ServeHTTP checks a request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		s.refuse(w, r, http.StatusBadRequest, "scangate sends no query string")
		return
	}
	if r.Header.Get("PRIVATE-TOKEN") != s.token {
		s.refuse(w, r, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	if m := statusPath.FindStringSubmatch(path); m != nil && r.Method == http.MethodPost {
		s.createStatus(w, r, atoi(m[1]), m[2])
		return
	}
	if m := notesPath.FindStringSubmatch(path); m != nil {
		switch {
		case m[3] == "" && r.Method == http.MethodPost:
			s.note(w, r, atoi(m[1]), atoi(m[2]), 0)
			return
		case m[3] != "" && r.Method == http.MethodPut:
			s.note(w, r, atoi(m[1]), atoi(m[2]), atoi(m[3]))
			return
		}
	}
	s.refuse(w, r, http.StatusNotFound, "404 Not Found: the stand-in serves POST statuses, POST and PUT merge request notes")
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// body reads a request's JSON object, refusing a body that is not one or
// holds an attribute not in allowed (name -> whether it is required).
func (s *Server) body(w http.ResponseWriter, r *http.Request, allowed map[string]bool) (map[string]any, bool) {
	if r.Header.Get("Content-Type") != "application/json" {
		s.refuse(w, r, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return nil, false
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.refuse(w, r, http.StatusBadRequest, "400 Bad request - body is not a JSON object: "+err.Error())
		return nil, false
	}
	for k := range body {
		if _, ok := allowed[k]; !ok {
			s.refuse(w, r, http.StatusBadRequest, "400 Bad request - "+k+" is not an attribute of this endpoint")
			return nil, false
		}
	}
	for k, required := range allowed {
		if _, ok := body[k].(string); required && !ok {
			s.refuse(w, r, http.StatusBadRequest, "400 Bad request - "+k+" is missing")
			return nil, false
		}
	}
	return body, true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// createStatus answers POST /projects/:id/statuses/:sha.
func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, project int64, sha string) {
	body, ok := s.body(w, r, map[string]bool{"state": true, "ref": false, "name": false, "context": false,
		"target_url": false, "description": false, "coverage": false, "pipeline_id": false})
	if !ok {
		return
	}
	switch str(body["state"]) {
	case "pending", "running", "success", "failed", "canceled", "skipped":
	default:
		s.refuse(w, r, http.StatusBadRequest, "state does not have a valid value")
		return
	}
	st := Status{Project: project, SHA: sha, State: str(body["state"]), Name: str(body["name"]), Description: str(body["description"]),
		Target: str(body["target_url"])}
	s.mu.Lock()
	_, known := s.projects[project]
	k := fmt.Sprintf("%d/%s@%s", project, st.Name, sha)
	same := s.state[k] == st.State
	s.mu.Unlock()
	switch {
	case !known:
		s.refuse(w, r, http.StatusNotFound, "404 Project Not Found")
		return
	case same:
		s.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("Cannot transition status via :%s from :%s", st.State, st.State))
		return
	}
	s.mu.Lock()
	s.state[k] = st.State
	s.statuses = append(s.statuses, st)
	id := len(s.statuses)
	s.requests = append(s.requests, "POST "+r.URL.EscapedPath()[len(Prefix):])
	s.mu.Unlock()
	s.answer(w, http.StatusCreated, map[string]any{"id": id, "sha": sha, "ref": nil, "status": st.State, "name": st.Name,
		"target_url": st.Target, "description": st.Description, "created_at": now(), "started_at": nil, "finished_at": nil,
		"allow_failure": false, "coverage": nil, "author": author()})
}

// note answers POST .../notes (id 0) and PUT .../notes/:note_id.
func (s *Server) note(w http.ResponseWriter, r *http.Request, project, mr, id int64) {
	allowed := map[string]bool{"body": true}
	if id == 0 {
		allowed["internal"], allowed["created_at"], allowed["merge_request_diff_head_sha"] = false, false, false
	}
	body, ok := s.body(w, r, allowed)
	if !ok {
		return
	}
	text := str(body["body"])
	if n := utf8.RuneCountInString(text); n == 0 || n > MaxNoteBody {
		s.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("400 Bad request - body is %d characters, not 1 to %d", n, MaxNoteBody))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.projects[project][mr] {
		s.refuseLocked(w, r, http.StatusNotFound, "404 Not found: no merge request "+strconv.FormatInt(mr, 10)+" in project "+strconv.FormatInt(project, 10))
		return
	}
	var n *Note
	status := http.StatusOK
	if id == 0 {
		s.notes = append(s.notes, Note{ID: int64(len(s.notes) + 1), Project: project, MR: mr, Body: text})
		n = &s.notes[len(s.notes)-1]
		status = http.StatusCreated
	} else {
		if id > int64(len(s.notes)) || s.notes[id-1].ID == 0 || s.notes[id-1].Project != project || s.notes[id-1].MR != mr {
			s.refuseLocked(w, r, http.StatusNotFound, "404 Not found: no note "+strconv.FormatInt(id, 10)+" on this merge request")
			return
		}
		n = &s.notes[id-1]
		n.Body = text
		n.Edits++
	}
	s.requests = append(s.requests, r.Method+" "+r.URL.EscapedPath()[len(Prefix):])
	s.answer(w, status, map[string]any{"id": n.ID, "type": nil, "body": n.Body, "attachment": nil, "author": author(),
		"created_at": now(), "updated_at": now(), "system": false, "noteable_id": 1000 + mr, "noteable_type": "MergeRequest",
		"project_id": project, "noteable_iid": mr, "resolvable": false, "confidential": false, "internal": false,
		"imported": false, "imported_from": "none"})
}

func author() map[string]any {
	return map[string]any{"id": 1, "username": "project_5_bot", "name": "scangate", "state": "active", "locked": false,
		"avatar_url": "https://gitlab.example.com/avatar.png", "web_url": "https://gitlab.example.com/project_5_bot"}
}

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *Server) answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseLocked(w, r, status, message)
}

func (s *Server) refuseLocked(w http.ResponseWriter, r *http.Request, status int, message string) {
	s.refusals = append(s.refusals, Refusal{Method: r.Method, Path: r.URL.EscapedPath(), Status: status, Reason: message})
	s.answer(w, status, map[string]string{"message": message})
}
