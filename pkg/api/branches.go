package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/scangate"
)

// BranchReader reads branches and their newest analyses.
type BranchReader interface {
	Branch(ctx context.Context, id int64) (scangate.Branch, error)
	BranchesPage(ctx context.Context, f scangate.BranchFilter, limit int, after map[string]string) (scangate.Page[scangate.Branch], error)
}

// GetBranch is GET /branches/{branch_id}: a branch with its newest scan
// of each (scan type, category).
func GetBranch(st BranchReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetBranch", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "branch_id")
			if err != nil {
				return Reply{}, err
			}
			b, err := st.Branch(ctx, id)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewBranch(b)}, nil
		}}
}

// ListBranches is GET /branches?vc_id=&repo_id= (both required): one
// repository's branches by name; with name (refs/heads/ removed), the
// page of that one branch, or an empty page.
func ListBranches(st BranchReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListBranches", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
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
			bs, err := st.BranchesPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/branches", r, bs, scangate.ViewBranch)
		}}
}
