package api

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// The read side (docs/API.md, Reading): a scan's findings, pull requests and
// their scans, allowlists. Users: users_read.go.

// readRoles may read scans, pull requests and allowlists.
var readRoles = []scangate.Role{scangate.RoleAdmin, scangate.RoleUser, scangate.RoleReadonly}

// PRReader reads what scans recorded: findings, pull requests.
type PRReader interface {
	ScanRepo(ctx context.Context, scanID int64) (scangate.RepoRef, error)
	PR(ctx context.Context, id int64) (scangate.PR, error)
	FindingsPage(ctx context.Context, scanID int64, f scangate.FindingFilter, limit int, after map[string]string) (scangate.Page[scangate.RecordedFinding], error)
	PRScansPage(ctx context.Context, prID int64, t scangate.ScanType, limit int, after map[string]string) (scangate.Page[scangate.Scan], scangate.PR, error)
	PRsPage(ctx context.Context, f scangate.PRFilter, limit int, after map[string]string) (scangate.Page[scangate.PR], error)
}

// AllowlistReader reads allowlists.
type AllowlistReader interface {
	AllowlistDetail(ctx context.Context, id int64) (scangate.Allowlist, []scangate.Comment, error)
	AllowlistsPage(ctx context.Context, f scangate.AllowlistFilter, limit int, after map[string]string) (scangate.Page[scangate.Allowlist], error)
}

// findingBody is a finding of a recorded scan.
type findingBody struct {
	ID           int      `json:"id"` // its place in the scan, from 1
	Name         string   `json:"name"`
	Aliases      []string `json:"aliases"`
	Rule         *string  `json:"rule"`
	Path         *string  `json:"path"`
	Line         *int64   `json:"line"`
	Severity     string   `json:"severity"`
	Suppressed   bool     `json:"suppressed"`
	SuppressedBy []int64  `json:"suppressed_by"`
	// Fingerprint and FingerprintSource: null for findings recorded
	// before fingerprints.
	Fingerprint       *string `json:"fingerprint"`
	FingerprintSource *string `json:"fingerprint_source"`
	// BaselineState: new or unchanged for a pull request's scan's
	// findings; null for a branch analysis's, and for findings recorded
	// before classification.
	BaselineState *string `json:"baseline_state"`
}

func findingJSON(f scangate.RecordedFinding) findingBody {
	b := findingBody{ID: f.Index + 1, Name: f.Name, Aliases: f.Aliases, Line: f.Line, Severity: string(f.Severity),
		Suppressed: f.Suppressed, SuppressedBy: f.SuppressedBy}
	if b.Aliases == nil {
		b.Aliases = []string{}
	}
	if b.SuppressedBy == nil {
		b.SuppressedBy = []int64{}
	}
	if f.Rule != "" {
		b.Rule = &f.Rule
	}
	if f.Path != "" {
		b.Path = &f.Path
	}
	if f.Fingerprint != "" {
		b.Fingerprint, b.FingerprintSource = &f.Fingerprint, &f.FingerprintSource
	}
	if f.BaselineState != "" {
		b.BaselineState = &f.BaselineState
	}
	return b
}

// ListFindings is GET /pr/scan/{pr_scan_id}/findings (?suppressed=, and
// ?severity=: at or above it).
func ListFindings(st PRReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListFindings", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "pr_scan_id")
			if err != nil {
				return Reply{}, err
			}
			if c.Repos != nil {
				// A token scoped to repositories reads the scan's first
				// (the page alone does not name its repository).
				r, err := st.ScanRepo(ctx, id)
				if err == nil {
					err = mayRead(c, r.VcID, r.RepoID, "no scan has the id %d", id)
				}
				if err != nil {
					return Reply{}, err
				}
			}
			q := readQuery(req)
			f := scangate.FindingFilter{Suppressed: q.boolean("suppressed"), Severity: scangate.Severity(q.enum("severity", scangate.Severities)),
				BaselineState: q.enum("baseline_state", scangate.BaselineStates)}
			r, err := pg.read(q, "findings", map[string]string{"pr_scan_id": strconv.FormatInt(id, 10)})
			if err != nil {
				return Reply{}, err
			}
			fs, err := st.FindingsPage(ctx, id, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/pr/scan/"+strconv.FormatInt(id, 10)+"/findings", r, fs, findingJSON)
		}}
}

// GetPR is GET /pr/{pr_id}: the PR object of spec section 2.2.
func GetPR(st PRReader, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetPR", Roles: readRoles, RepoScope: true, Log: log}, "pr_id", st.PR,
		inRepo[scangate.PR]("no pull request has the id %d"), scangate.ViewPR)
}

// ListPRScans is GET /pr/{pr_id}/scans (?scan_type=): newest first, each
// as GET /pr/scan/{id} shows it.
func ListPRScans(st PRReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListPRScans", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "pr_id")
			if err != nil {
				return Reply{}, err
			}
			q := readQuery(req)
			t := q.enum("scan_type", scangate.ScanTypes)
			r, err := pg.read(q, "pr-scans", map[string]string{"pr_id": strconv.FormatInt(id, 10)})
			if err != nil {
				return Reply{}, err
			}
			scans, pr, err := st.PRScansPage(ctx, id, scangate.ScanType(t), r.limit, r.after)
			if err == nil {
				err = mayRead(c, pr.VcID, pr.RepoID, "no pull request has the id %d", id)
			}
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/pr/"+strconv.FormatInt(id, 10)+"/scans", r, scans,
				func(sc scangate.Scan) scangate.ScanView { return scangate.ViewScan(sc, pr) })
		}}
}

// ListPRs is GET /pr (?vc_id=&repo_id=, both or neither; ?blocked=;
// ?repo_name=, the repository's name ignoring case): PR objects by last
// scan, newest first. With number (the PR's number in its
// version-control system, only with vc_id and repo_id), the page of that
// one PR, or an empty page.
func ListPRs(st PRReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListPRs", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			var f scangate.PRFilter
			_, hasVc := q.values["vc_id"]
			_, hasRepo := q.values["repo_id"]
			f.VcID, f.RepoID = q.id("vc_id"), q.id("repo_id")
			switch {
			case hasVc && !hasRepo:
				q.bad("repo_id", "is required with vc_id")
			case hasRepo && !hasVc:
				q.bad("vc_id", "is required with repo_id")
			}
			if _, hasNumber := q.values["number"]; hasNumber && (!hasVc || !hasRepo) {
				q.bad("number", "is taken only with vc_id and repo_id")
			}
			f.Number = q.id("number")
			f.Blocked = q.boolean("blocked")
			f.RepoName = q.text("repo_name", scangate.MaxNameLen)
			r, err := pg.read(q, "prs", nil)
			if err != nil {
				return Reply{}, err
			}
			// A token scoped to repositories lists theirs only: another
			// repository's page is empty, as if it had no PR.
			f.Repos = c.Repos
			prs, err := st.PRsPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/pr", r, prs, scangate.ViewPR)
		}}
}

// commentBody is one comment of an allowlist.
type commentBody struct {
	ID        int64         `json:"id"`
	Comment   string        `json:"comment"`
	CreatedBy int64         `json:"created_by"`
	CreatedOn scangate.Time `json:"created_on"`
}

// allowlistWithComments is an allowlist as GET /whitelist/{whitelist_id}
// shows it: its comments as objects.
func allowlistWithComments(a scangate.Allowlist, comments []commentBody, now time.Time) scangate.AllowlistView {
	v := scangate.ViewAllowlist(a, now)
	v.Comments = comments
	return v
}

// GetAllowlist is GET /whitelist/{whitelist_id}: the allowlist with its
// comments, oldest first.
func GetAllowlist(st AllowlistReader, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetAllowlist", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "whitelist_id")
			if err != nil {
				return Reply{}, err
			}
			a, cs, err := st.AllowlistDetail(ctx, id)
			if err != nil {
				return Reply{}, err
			}
			comments := make([]commentBody, len(cs))
			for i, c := range cs {
				comments[i] = commentBody{ID: c.ID, Comment: c.Text, CreatedBy: c.By, CreatedOn: c.At}
			}
			return Reply{Status: http.StatusOK, Body: allowlistWithComments(a, comments, now())}, nil
		}}
}

// ListAllowlists is GET /whitelist (?type=&name=&active=): newest first;
// a name matches as suppression matches it.
func ListAllowlists(st AllowlistReader, pg Cursors, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListAllowlists", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			f := scangate.AllowlistFilter{
				Type: scangate.ScanType(q.enum("type", scangate.ScanTypes)), Name: q.text("name", scangate.MaxNameLen),
				Active: q.boolean("active"),
			}
			r, err := pg.read(q, "allowlists", nil)
			if err != nil {
				return Reply{}, err
			}
			as, err := st.AllowlistsPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			return replyPage(pg, req, "/api/whitelist", r, as,
				func(a scangate.Allowlist) scangate.AllowlistView { return scangate.ViewAllowlist(a, at) })
		}}
}
