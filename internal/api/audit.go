package api

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// AuditReader reads the audit log.
type AuditReader interface {
	AuditPage(ctx context.Context, f scangate.AuditFilter, limit int, after map[string]string) (scangate.Page[scangate.AuditEntry], error)
}

// auditBody is an audit entry as GET /audit shows it.
type auditBody struct {
	ID        string                     `json:"id"`
	At        scangate.Time              `json:"at"`
	Action    string                     `json:"action"`
	Actor     *actorBody                 `json:"actor"`
	Target    targetBody                 `json:"target"`
	Changes   map[string]scangate.Change `json:"changes"`
	RequestID string                     `json:"request_id"`
	SourceIP  *string                    `json:"source_ip"`
}

type actorBody struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	TokenID  *int64 `json:"token_id"`
}

type targetBody struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func auditJSON(e scangate.AuditEntry) auditBody {
	b := auditBody{ID: e.ID, At: e.At, Action: e.Action, Target: targetBody{e.Target.Type, e.Target.ID},
		Changes: e.Changes, RequestID: e.Who.RequestID}
	if b.Changes == nil {
		b.Changes = map[string]scangate.Change{}
	}
	if e.Who.SourceIP != "" {
		b.SourceIP = &e.Who.SourceIP
	}
	if a := e.Who.Actor; a != nil {
		b.Actor = &actorBody{UserID: a.UserID, Username: a.Username}
		if a.TokenID != 0 {
			b.Actor.TokenID = &a.TokenID
		}
	}
	return b
}

// ListAudit is GET /audit (admins): the whole log, change and login
// entries together, newest first; filters narrow it (an action reads its
// partition only).
func ListAudit(st AuditReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListAudit", Roles: []scangate.Role{scangate.RoleAdmin}, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			f := scangate.AuditFilter{Action: q.enum("action", scangate.AuditActions), ActorID: q.id("actor_id"),
				TargetType: q.enum("target_type", scangate.AuditTargetTypes), TargetID: q.text("target_id", 64)}
			if (f.TargetType == "") != (f.TargetID == "") {
				q.bad("target_type", "goes with target_id")
			}
			f.Since, f.Until = q.time("since"), q.time("until")
			r, err := pg.read(q, "audit", nil)
			if err != nil {
				return Reply{}, err
			}
			entries, err := st.AuditPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/audit", r, entries, auditJSON)
		}}
}

// time reads a filter that is an RFC 3339 time; zero when absent or wrong.
func (q *query) time(name string) time.Time {
	v, _ := q.filter(name, func(s string) error {
		if _, err := scangate.ParseRFC3339(s); err != nil {
			return fmt.Errorf("must be an RFC 3339 time such as 2026-11-22T09:00:00Z")
		}
		return nil
	})
	t, _ := scangate.ParseRFC3339(v)
	return t.Time
}
