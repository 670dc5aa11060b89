package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/usecase"
)

// The gate (docs/API.md, The gate): a pull request's stored decision, and
// the policy that decides it.

// GateReader reads a pull request's stored gate.
type GateReader interface {
	PRGate(ctx context.Context, id int64) (scangate.PRGate, error)
}

// GetPRGate is GET /pr/{pr_id}/gate: whether the pull request may merge,
// why not, and its newest scan of each (scan type, category), as stored
// whenever it changes (so a listing of blocked PRs and a gate never
// disagree). Two round trips.
func GetPRGate(st GateReader, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetPRGate", Roles: readRoles, RepoScope: true, Log: log}, "pr_id", st.PRGate,
		inRepo[scangate.PRGate]("no pull request has the id %d"), scangate.ViewGate)
}

// PolicyStore keeps the gate policy.
type PolicyStore interface {
	AuthorityStore
	GatePolicy(ctx context.Context, repo int64) (scangate.StoredPolicy, error)
	SetGatePolicy(ctx context.Context, c scangate.PolicyChange, who scangate.Who, now time.Time, lease int64) (scangate.StoredPolicy, work.Item, error)
}

// PolicyReader reads the gate policy.
type PolicyReader interface {
	GatePolicy(ctx context.Context, repo int64) (scangate.StoredPolicy, error)
}

var adminRoles = []scangate.Role{scangate.RoleAdmin}

// policyBody is the global gate policy as its routes show it.
type policyBody struct {
	scangate.Policy
	Version   int64          `json:"version"`
	UpdatedAt *scangate.Time `json:"updated_at"`
	UpdatedBy *int64         `json:"updated_by"`
	Rejudge   *rejudgeBody   `json:"rejudge,omitempty"`
}

// repoPolicyBody is a repository's gate policy: its own members, and the
// policy that results.
type repoPolicyBody struct {
	RepoID    int64                    `json:"repo_id"`
	Override  *scangate.PolicyOverride `json:"override"`
	Effective scangate.Policy          `json:"effective"`
	Version   int64                    `json:"version"`
	UpdatedAt *scangate.Time           `json:"updated_at"`
	UpdatedBy *int64                   `json:"updated_by"`
	Rejudge   *rejudgeBody             `json:"rejudge,omitempty"`
}

// rejudgeBody is the work a policy change leaves: re-judging the gate of
// every pull request (prs: how many, once planned).
type rejudgeBody struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
	PRs    *int64 `json:"prs"`
}

func rejudgeJSON(it work.Item) *rejudgeBody {
	b := &rejudgeBody{ID: it.ID, Status: it.Status}
	if it.Steps >= 0 {
		n := it.Planned["prs"]
		b.PRs = &n
	}
	return b
}

func policyJSON(p scangate.StoredPolicy) policyBody {
	return policyBody{Policy: p.Global.With(nil), Version: p.Version, UpdatedAt: p.UpdatedAt, UpdatedBy: p.UpdatedBy}
}

func repoPolicyJSON(p scangate.StoredPolicy) repoPolicyBody {
	return repoPolicyBody{RepoID: p.RepoID, Override: p.Override, Effective: p.Effective(), Version: p.Version,
		UpdatedAt: p.UpdatedAt, UpdatedBy: p.UpdatedBy}
}

// GetGatePolicy is GET /gate/policy: the global policy.
func GetGatePolicy(st PolicyReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetGatePolicy", Roles: adminRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, _ events.APIGatewayProxyRequest) (Reply, error) {
			p, err := st.GatePolicy(ctx, 0)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: policyJSON(p)}, nil
		}}
}

// GetRepoGatePolicy is GET /gate/policy/repos/{repo_id}: a repository's
// own members and the policy that results.
func GetRepoGatePolicy(st PolicyReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetRepoGatePolicy", Roles: adminRoles, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			repo, err := PathID(req, "repo_id")
			if err != nil {
				return Reply{}, err
			}
			p, err := st.GatePolicy(ctx, repo)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: repoPolicyJSON(p)}, nil
		}}
}

// UpdateGatePolicy is PUT /gate/policy: the global policy, replaced (a
// member left out takes its default). The change re-judges every pull
// request's gate as durable work, run at once for as long as the request
// may take; the answer says how many pull requests it re-judges and
// whether it finished.
func UpdateGatePolicy(st PolicyStore, run usecase.WorkRunner, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "UpdateGatePolicy", Roles: adminRoles, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			o, err := readPolicy(m)
			if err != nil {
				return Reply{}, err
			}
			p, it, err := changePolicy(ctx, st, run, scangate.PolicyChange{Global: scangate.DefaultPolicy().With(&o)}, whoOf(c, req), now, log)
			if err != nil {
				return Reply{}, err
			}
			b := policyJSON(p)
			b.Rejudge = rejudgeJSON(it)
			return Reply{Status: http.StatusOK, Body: b}, nil
		}}
}

// UpdateRepoGatePolicy is PUT /gate/policy/repos/{repo_id}: the
// repository's own members, replaced (a member left out follows the
// global policy).
func UpdateRepoGatePolicy(st PolicyStore, run usecase.WorkRunner, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "UpdateRepoGatePolicy", Roles: adminRoles, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			repo, err := PathID(req, "repo_id")
			if err != nil {
				return Reply{}, err
			}
			o, err := readPolicy(m)
			if err != nil {
				return Reply{}, err
			}
			return repoChange(ctx, st, run, scangate.PolicyChange{RepoID: repo, Override: &o}, whoOf(c, req), now, log)
		}}
}

// DeleteRepoGatePolicy is DELETE /gate/policy/repos/{repo_id}: the
// repository follows the global policy again.
func DeleteRepoGatePolicy(st PolicyStore, run usecase.WorkRunner, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "DeleteRepoGatePolicy", Roles: adminRoles, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			repo, err := PathID(req, "repo_id")
			if err != nil {
				return Reply{}, err
			}
			return repoChange(ctx, st, run, scangate.PolicyChange{RepoID: repo}, whoOf(c, req), now, log)
		}}
}

func repoChange(ctx context.Context, st PolicyStore, run usecase.WorkRunner, pc scangate.PolicyChange, who scangate.Who, now func() time.Time, log *slog.Logger) (Reply, error) {
	p, it, err := changePolicy(ctx, st, run, pc, who, now, log)
	if err != nil {
		return Reply{}, err
	}
	b := repoPolicyJSON(p)
	b.Rejudge = rejudgeJSON(it)
	return Reply{Status: http.StatusOK, Body: b}, nil
}

// changePolicy stores a policy change with its work, and runs the work
// for as long as the request may. The change is made once it is stored:
// work cut short, or failing, is left to the scheduled function, which
// resumes it within a minute, and the answer says it is running.
func changePolicy(ctx context.Context, st PolicyStore, run usecase.WorkRunner, pc scangate.PolicyChange, who scangate.Who, now func() time.Time, log *slog.Logger) (scangate.StoredPolicy, work.Item, error) {
	at := now()
	p, it, err := st.SetGatePolicy(ctx, pc, who, at, run.LeaseFrom(at))
	if err != nil {
		return p, it, err
	}
	return p, usecase.RunWork(ctx, run, it, at, log), nil
}

// readPolicy reads a policy body: block_severity (per scan type),
// required ({scan_type, category} pairs), block_on_missing and block_on,
// each optional.
func readPolicy(m members) (scangate.PolicyOverride, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var o scangate.PolicyOverride
	if bf := f.object("block_severity", false); bf != nil {
		o.BlockSeverity = map[scangate.ScanType]scangate.Severity{}
		for _, t := range scangate.ScanTypes {
			if s, ok := bf.enum(t, false, scangate.Severities); ok {
				o.BlockSeverity[scangate.ScanType(t)] = scangate.Severity(s)
			}
		}
		bf.done()
	}
	if arr := f.array("required", false); arr != nil {
		req := []scangate.Requirement{}
		for i, v := range arr {
			if rf := f.element("required", i, v); rf != nil {
				t, _ := rf.enum("scan_type", true, scangate.ScanTypes)
				c, _ := rf.str("category", true)
				req = append(req, scangate.Requirement{Type: scangate.ScanType(t), Category: c})
				rf.done()
			}
		}
		o.Required = &req
	}
	if b, ok := f.boolean("block_on_missing", false); ok {
		o.BlockOnMissing = &b
	}
	if b, ok := f.enum("block_on", false, scangate.BlockOns); ok {
		o.BlockOn = &b
	}
	f.done()
	if len(p) == 0 {
		o.Validate(&p)
	}
	return o, p.Err()
}
