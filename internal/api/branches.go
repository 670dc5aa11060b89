package api

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// BranchReader reads branches and their newest analyses.
type BranchReader interface {
	Branch(ctx context.Context, id int64) (scangate.Branch, error)
	BranchesPage(ctx context.Context, f scangate.BranchFilter, limit int, after map[string]string) (scangate.Page[scangate.Branch], error)
}

// GetBranch is GET /branches/{branch_id}: a branch with its newest scan
// of each (scan type, category). A token scoped to other repositories
// finds none (404).
func GetBranch(st BranchReader, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetBranch", Roles: readRoles, RepoScope: true, Log: log}, "branch_id", st.Branch,
		inRepo[scangate.Branch]("no branch has the id %d"), scangate.ViewBranch)
}

// ListBranches is GET /branches?vc_id=&repo_id= (both required): one
// repository's branches by name; with name (refs/heads/ removed), the
// page of that one branch, or an empty page. A token scoped to other
// repositories gets the empty page, as of a repository with no branch.
func ListBranches(st BranchReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListBranches", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			var f scangate.BranchFilter
			for _, name := range []string{"vc_id", "repo_id"} {
				if _, ok := q.values[name]; !ok {
					q.bad(name, "is required")
				}
			}
			_, hasName := q.values["name"]
			f.VcID, f.RepoID = q.id("vc_id"), q.id("repo_id")
			raw := q.text("name", len("refs/heads/")+scangate.MaxBranchLen)
			f.Name = scangate.BranchName(raw)
			if hasName && raw != "" && (f.Name == "" || len([]rune(f.Name)) > scangate.MaxBranchLen) {
				q.bad("name", "must be 1 to %d characters (after a leading refs/heads/)", scangate.MaxBranchLen)
			}
			r, err := pg.read(q, "branches", nil)
			if err != nil {
				return Reply{}, err
			}
			if !c.Reaches(f.VcID, f.RepoID) {
				return replyPage(pg, req, "/api/branches", r, scangate.Page[scangate.Branch]{}, scangate.ViewBranch)
			}
			bs, err := st.BranchesPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/branches", r, bs, scangate.ViewBranch)
		}}
}

// AbsentReader reads a pull request's absent findings.
type AbsentReader interface {
	// AbsentPage returns the PR it read too (a token scoped to
	// repositories is checked against it), with the error once it is read.
	AbsentPage(ctx context.Context, prID int64, limit int, after map[string]string) (scangate.Page[scangate.AbsentFinding], scangate.PR, error)
}

// absentBody is a baseline's finding that the pull request fixes.
type absentBody struct {
	ScanType          scangate.ScanType `json:"scan_type"`
	Category          string            `json:"category"`
	ScanID            int64             `json:"scan_id"`
	BaselineScanID    int64             `json:"baseline_scan_id"`
	FindingID         int               `json:"finding_id"` // its id in the baseline scan
	Name              string            `json:"name"`
	Aliases           []string          `json:"aliases"`
	Rule              *string           `json:"rule"`
	Path              *string           `json:"path"`
	Line              *int64            `json:"line"`
	Severity          string            `json:"severity"`
	Fingerprint       *string           `json:"fingerprint"`
	FingerprintSource *string           `json:"fingerprint_source"`
	BaselineState     string            `json:"baseline_state"`
}

func absentJSON(f scangate.AbsentFinding) absentBody {
	b := absentBody{ScanType: f.ScanType, Category: f.Category, ScanID: f.ScanID, BaselineScanID: f.BaselineScanID, FindingID: f.Index + 1,
		Name: f.Name, Aliases: f.Aliases, Line: f.Line, Severity: string(f.Severity), BaselineState: scangate.BaselineAbsent}
	if b.Aliases == nil {
		b.Aliases = []string{}
	}
	for _, p := range []struct {
		dst **string
		v   string
	}{{&b.Rule, f.Rule}, {&b.Path, f.Path}, {&b.Fingerprint, f.Fingerprint}, {&b.FingerprintSource, f.FingerprintSource}} {
		if p.v != "" {
			v := p.v
			*p.dst = &v
		}
	}
	return b
}

// ListAbsent is GET /pr/{pr_id}/absent: the findings of its newest
// scans' baselines that those scans no longer have (fixed by the PR).
func ListAbsent(st AbsentReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListAbsent", Roles: readRoles, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "pr_id")
			if err != nil {
				return Reply{}, err
			}
			q := readQuery(req)
			r, err := pg.read(q, "pr-absent", map[string]string{"pr_id": strconv.FormatInt(id, 10)})
			if err != nil {
				return Reply{}, err
			}
			// The page names the PR it read: a token scoped to other
			// repositories is answered 404 before anything else of it,
			// even a cursor refused.
			fs, pr, err := st.AbsentPage(ctx, id, r.limit, r.after)
			if pr.ID != 0 {
				if err := mayRead(c, pr.VcID, pr.RepoID, "no pull request has the id %d", id); err != nil {
					return Reply{}, err
				}
			}
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/pr/"+strconv.FormatInt(id, 10)+"/absent", r, fs, absentJSON)
		}}
}
