package api

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// UserReader reads users.
type UserReader interface {
	CallerStore
	UsersPage(ctx context.Context, f scangate.UserFilter, limit int, after map[string]string) (scangate.Page[scangate.User], error)
}

// GetUser is GET /users/{user_id}: admins read any user, every role reads
// itself. Another user's id is 403 for a caller that is not an admin,
// whatever the id (a malformed one too), so that it learns nothing of
// other accounts.
func GetUser(st UserReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetUser", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			if c.Role != scangate.RoleAdmin && req.PathParameters["user_id"] != strconv.FormatInt(c.ID, 10) {
				return Reply{}, scangate.Errorf(scangate.KindForbidden, "only admins may read other users")
			}
			id, err := PathID(req, "user_id")
			if err != nil {
				return Reply{}, err
			}
			return readUser(ctx, st, id)
		}}
}

// GetMe is GET /users/me: the caller's own user.
func GetMe(st UserReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetMe", Roles: readRoles, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, _ events.APIGatewayProxyRequest) (Reply, error) {
			return readUser(ctx, st, c.ID)
		}}
}

func readUser(ctx context.Context, st UserReader, id int64) (Reply, error) {
	u, err := st.User(ctx, id)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Status: http.StatusOK, Body: userJSON(u)}, nil
}

// ListUsers is GET /users (?role=&active=): admins only; users by id.
func ListUsers(st UserReader, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListUsers", Roles: []scangate.Role{scangate.RoleAdmin}, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			f := scangate.UserFilter{Role: scangate.Role(q.enum("role", scangate.Roles)), Active: q.boolean("active")}
			r, err := pg.read(q, "users", nil)
			if err != nil {
				return Reply{}, err
			}
			us, err := st.UsersPage(ctx, f, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/users", r, us, userJSON)
		}}
}
