package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/usecase"
)

// AllowlistStore keeps allowlists, and writes with each change the work
// that re-evaluates what it covers.
type AllowlistStore interface {
	AuthorityStore
	CreateAllowlist(ctx context.Context, a scangate.Allowlist, comment string, who scangate.Who, now time.Time, lease int64) (scangate.Allowlist, work.Item, error)
	UpdateAllowlist(ctx context.Context, id int64, c scangate.AllowlistChange, who scangate.Who, now time.Time, lease int64) (scangate.Allowlist, work.Item, error)
}

// allowlistBody is the allowlist change response of spec section 2.4.
type allowlistBody struct {
	ID                     int64         `json:"id"`
	CreatedBy              int64         `json:"created_by"`
	UpdatedBy              int64         `json:"updated_by"`
	CreatedOn              scangate.Time `json:"created_on"`
	Name                   string        `json:"name"`
	SecretsUpdated         int64         `json:"secrets_updated"`
	VulnerabilitiesUpdated int64         `json:"vulnerabilities_updated"`
	Comments               []int64       `json:"comments"`
	Type                   string        `json:"type"`
}

// acceptedBody is the answer of a change whose re-evaluation still runs
// (202): the change response, its counts 0 (the exact counts are the
// re-evaluation's, once complete), and the re-evaluation.
type acceptedBody struct {
	allowlistBody
	Reevaluation reevaluationRef `json:"reevaluation"`
}

// reevaluationRef names a running re-evaluation: findings is how many
// it re-evaluates (null while it is still being planned).
type reevaluationRef struct {
	ID       int64  `json:"id"`
	Status   string `json:"status"`
	Findings *int64 `json:"findings"`
}

func allowlistJSON(a scangate.Allowlist, u scangate.Updated) allowlistBody {
	comments := a.Comments
	if comments == nil {
		comments = []int64{}
	}
	return allowlistBody{ID: a.ID, CreatedBy: a.CreatedBy, UpdatedBy: a.UpdatedBy, CreatedOn: a.CreatedOn, Name: a.Rule.Name,
		SecretsUpdated: u.Secrets, VulnerabilitiesUpdated: u.Vulnerabilities, Comments: comments, Type: string(a.Rule.Type)}
}

var allowlistRoles = []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}

// allowlistReply answers a change: with status (200 or 201) once its
// re-evaluation is complete, with its exact counts; 202 while it runs,
// with the re-evaluation and its Location.
func allowlistReply(req events.APIGatewayProxyRequest, status int, a scangate.Allowlist, it work.Item) Reply {
	if it.Status == work.Complete {
		u := scangate.Updated{Secrets: it.Totals["secrets_updated"], Vulnerabilities: it.Totals["vulnerabilities_updated"]}
		return Reply{Status: status, Body: allowlistJSON(a, u)}
	}
	ref := reevaluationRef{ID: it.ID, Status: it.Status}
	if it.Steps >= 0 {
		n := it.Planned["findings"]
		ref.Findings = &n
	}
	return Reply{Status: http.StatusAccepted, Body: acceptedBody{allowlistBody: allowlistJSON(a, scangate.Updated{}), Reevaluation: ref},
		Location: apiLocation(req, "/reevaluations", it.ID)}
}

// CreateAllowlist is POST /whitelist.
func CreateAllowlist(st AllowlistStore, run usecase.WorkRunner, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "CreateAllowlist", Roles: allowlistRoles, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			ch, err := readAllowlistChange(m, true, at)
			if err != nil {
				return Reply{}, err
			}
			na := ch.ApplyTo(scangate.Allowlist{Rule: scangate.Rule{Active: true, Repos: []int64{}, Vcs: []int64{}}})
			a, it, err := st.CreateAllowlist(ctx, na, ch.Comment, whoOf(c, req), at, run.LeaseFrom(at))
			if err != nil {
				return Reply{}, err
			}
			r := allowlistReply(req, http.StatusCreated, a, usecase.RunWork(ctx, run, it, at, log))
			if r.Status == http.StatusCreated {
				r.Location = location(req, "/whitelist", a.ID)
			}
			return r, nil
		}}
}

// UpdateAllowlist is PUT /whitelist/{whitelist_id} (Modify Allowlist).
func UpdateAllowlist(st AllowlistStore, run usecase.WorkRunner, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "UpdateAllowlist", Roles: allowlistRoles, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			id, err := PathID(req, "whitelist_id")
			if err != nil {
				return Reply{}, err
			}
			at := now()
			ch, err := readAllowlistChange(m, false, at)
			if err != nil {
				return Reply{}, err
			}
			a, it, err := st.UpdateAllowlist(ctx, id, ch, whoOf(c, req), at, run.LeaseFrom(at))
			if err != nil {
				return Reply{}, err
			}
			return allowlistReply(req, http.StatusOK, a, usecase.RunWork(ctx, run, it, at, log)), nil
		}}
}

// ReevaluationReader reads re-evaluations.
type ReevaluationReader interface {
	Reevaluation(ctx context.Context, id int64) (scangate.Reevaluation, error)
}

// reevaluationBody is GET /reevaluations/{id}: secrets_updated and
// vulnerabilities_updated are null until it is complete.
type reevaluationBody struct {
	ID                     int64          `json:"id"`
	AllowlistID            int64          `json:"allowlist_id"`
	Cause                  string         `json:"cause"`
	Status                 string         `json:"status"`
	FindingsTotal          *int64         `json:"findings_total"`
	FindingsDone           int64          `json:"findings_done"`
	StartedAt              scangate.Time  `json:"started_at"`
	CompletedAt            *scangate.Time `json:"completed_at"`
	SecretsUpdated         *int64         `json:"secrets_updated"`
	VulnerabilitiesUpdated *int64         `json:"vulnerabilities_updated"`
}

// GetReevaluation is GET /reevaluations/{reevaluation_id}: the
// re-evaluation an allowlist change or expiry left, its progress, and
// its exact counts once complete. Two round trips.
func GetReevaluation(st ReevaluationReader, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetReevaluation", Roles: readRoles, Log: log}, "reevaluation_id", st.Reevaluation, nil, viewReevaluation)
}

// viewReevaluation is a re-evaluation's body; its counts once complete.
func viewReevaluation(r scangate.Reevaluation) reevaluationBody {
	b := reevaluationBody{ID: r.ID, AllowlistID: r.AllowlistID, Cause: r.Cause, Status: r.Status, FindingsTotal: r.FindingsTotal,
		FindingsDone: r.FindingsDone, StartedAt: r.StartedAt, CompletedAt: r.CompletedAt}
	if r.Updated != nil {
		b.SecretsUpdated, b.VulnerabilitiesUpdated = &r.Updated.Secrets, &r.Updated.Vulnerabilities
	}
	return b
}

// readAllowlistChange reads the allowlist body of spec section 2.3 and the
// lifecycle members (docs/API.md, Allowlist): every member may be null,
// which leaves it as it is. On create, type, name and reason are required; on
// modify, expires_at "never" removes the expiry.
func readAllowlistChange(m members, create bool, now time.Time) (scangate.AllowlistChange, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var c scangate.AllowlistChange
	var t string
	if f.decode("type", false, true, "SECRET, VULNERABILITY or null", &t) {
		if !slices.Contains(scangate.ScanTypes, t) {
			p.Add("/type", "must be SECRET, VULNERABILITY or null")
		}
		st := scangate.ScanType(t)
		c.Type = &st
	}
	var name string
	if f.decode("name", false, true, "a string or null", &name) {
		c.Name = &name
	}
	var active, global bool
	if f.decode("active", false, true, "a boolean or null", &active) {
		c.Active = &active
	}
	if f.decode("global_", false, true, "a boolean or null", &global) {
		c.Global = &global
	}
	c.Repos = f.idList("repos")
	c.Vcs = f.idList("vcs")
	var comment string
	if f.decode("comment", false, true, "a string", &comment) {
		c.Comment = comment
	}
	readLifecycle(f, &c, create)
	f.done()
	if create {
		if c.Type == nil && !hasPointer(p, "/type") {
			p.Add("/type", "is required")
		}
		if c.Name == nil && !hasPointer(p, "/name") {
			p.Add("/name", "is required")
		}
		if c.Reason == nil && !hasPointer(p, "/reason") {
			p.Add("/reason", "is required: one of %s (why the findings it covers may merge)", strings.Join(scangate.Reasons, ", "))
		}
	}
	c.Validate(&p)
	if create {
		c.RequireFingerprints(&p)
	}
	c.ValidateExpiry(&p, now)
	return c, p.Err()
}

// readLifecycle reads reason, expires_at, paths and fingerprints.
func readLifecycle(f *fields, c *scangate.AllowlistChange, create bool) {
	var reason string
	if f.decode("reason", false, true, "one of "+strings.Join(scangate.Reasons, ", ")+" or null", &reason) {
		c.Reason = &reason
	}
	var expires string
	if f.decode("expires_at", false, true, "an RFC 3339 time or null", &expires) {
		at, err := scangate.ParseRFC3339(expires)
		switch {
		case expires == "never" && !create:
			c.NoExpiry = true
		case err != nil:
			f.p.Add("/expires_at", "must be an RFC 3339 time such as 2027-01-31T00:00:00Z%s", map[bool]string{false: ", or never"}[create])
		default:
			c.ExpiresAt = &at
		}
	}
	c.Paths = f.stringList("paths", "an array of globs or null")
	c.Fingerprints = f.stringList("fingerprints", "an array of fingerprints or null")
}

// stringList reads an array of strings that may be null (unchanged).
func (f *fields) stringList(name, want string) *[]string {
	v, ok := f.raw(name, false, true, want)
	if !ok {
		return nil
	}
	var l []string
	if err := json.Unmarshal(v, &l); err != nil || v[0] != '[' {
		f.p.Add(f.pointer(name), "must be an array of strings or null")
		return nil
	}
	return &l
}

func hasPointer(p scangate.Problems, ptr string) bool {
	for _, e := range p {
		if e.Pointer == ptr {
			return true
		}
	}
	return false
}

// idList reads an array of integers that may be null (unchanged).
func (f *fields) idList(name string) *[]int64 {
	v, ok := f.raw(name, false, true, "an array of integers or null")
	if !ok {
		return nil
	}
	var raw []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &raw) != nil {
		f.p.Add(f.pointer(name), "must be an array of integers or null")
		return nil
	}
	out := make([]int64, 0, len(raw))
	bad := false
	for i, e := range raw {
		n, err := parseInteger(e)
		if err != nil {
			f.p.Add(f.pointer(name)+"/"+strconv.Itoa(i), "must be an integer")
			bad = true
			continue
		}
		out = append(out, n)
	}
	if bad {
		return nil
	}
	return &out
}
