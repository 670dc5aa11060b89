package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

// UserStore keeps users.
type UserStore interface {
	AuthorityStore
	CreateUser(ctx context.Context, u scangate.User, who scangate.Who) (scangate.User, error)
	UpdateUser(ctx context.Context, id int64, change func(*scangate.User) error, who scangate.Who) (scangate.User, error)
}

// Folder gives the form under which e-mail addresses are unique
// (internal/emailfold.Fold); handed in so that only the functions that store an
// address link it.
type Folder func(string) string

// userBody is the user of spec section 2.5: never the password or its hash.
type userBody struct {
	ID           int64         `json:"id"`
	Username     string        `json:"username"`
	Role         scangate.Role `json:"role"`
	UserEmail    string        `json:"user_email"`
	CreatedAt    scangate.Time `json:"created_at"`
	UpdatedAt    scangate.Time `json:"updated_at"`
	AddedByUID   *int64        `json:"added_by_uid"`
	UpdatedByUID *int64        `json:"updated_by_uid"`
	Active       bool          `json:"active"`
	GroupID      *int64        `json:"group_id"`
}

func userJSON(u scangate.User) userBody {
	return userBody{
		ID: u.ID, Username: u.Username, Role: u.Role, UserEmail: u.Email,
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
		AddedByUID: u.AddedBy, UpdatedByUID: u.UpdatedBy, Active: u.Active,
	}
}

// CreateUser is POST /users: admins only; 201 with the user and its Location.
func CreateUser(st UserStore, hasher auth.PasswordHasher, fold Folder, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "CreateUser", Roles: []scangate.Role{scangate.RoleAdmin}, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			var p scangate.Problems
			f := readFields(m, "", &p)
			nu := scangate.NewUser{Active: true}
			var role string
			nu.Username, _ = f.str("username", true)
			nu.Email, _ = f.str("user_email", true)
			nu.Password, _ = f.str("password", true)
			role, _ = f.str("role", true)
			nu.Role = scangate.Role(role)
			if a, ok := f.boolean("active", false); ok {
				nu.Active = a
			}
			f.done()
			if len(p) == 0 {
				nu.Validate(&p)
			}
			if len(p) == 0 {
				scangate.CheckEmailKey(&p, fold(nu.Email))
			}
			if err := p.Err(); err != nil {
				return Reply{}, err
			}
			h, err := hasher.Hash(nu.Password)
			if err != nil {
				return Reply{}, fmt.Errorf("hash password: %w", err)
			}
			at := scangate.At(now())
			u, err := st.CreateUser(ctx, scangate.User{
				Username: nu.Username, Email: nu.Email, EmailKey: fold(nu.Email), Role: nu.Role, Active: nu.Active, PasswordHash: h,
				CreatedAt: at, UpdatedAt: at, AddedBy: &c.ID, UpdatedBy: &c.ID,
			}, whoOf(c, req))
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Body: userJSON(u), Location: location(req, "/users", u.ID)}, nil
		}}
}

// UpdateUser is PUT /users/{user_id}: admins only; replaces role, active and
// user_email.
func UpdateUser(st UserStore, fold Folder, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "UpdateUser", Roles: []scangate.Role{scangate.RoleAdmin}, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			id, err := PathID(req, "user_id")
			if err != nil {
				return Reply{}, err
			}
			var p scangate.Problems
			f := readFields(m, "", &p)
			var ch scangate.UserChange
			var role string
			role, _ = f.str("role", true)
			ch.Role = scangate.Role(role)
			ch.Active, _ = f.boolean("active", true)
			ch.Email, _ = f.str("user_email", true)
			f.done()
			if len(p) == 0 {
				ch.Validate(&p)
			}
			if len(p) == 0 {
				scangate.CheckEmailKey(&p, fold(ch.Email))
			}
			if err := p.Err(); err != nil {
				return Reply{}, err
			}
			u, err := st.UpdateUser(ctx, id, func(u *scangate.User) error {
				u.Role, u.Active, u.Email, u.EmailKey = ch.Role, ch.Active, ch.Email, fold(ch.Email)
				u.UpdatedAt, u.UpdatedBy = scangate.At(now()), &c.ID
				return nil
			}, whoOf(c, req))
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: userJSON(u)}, nil
		}}
}
