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

// TokenStore keeps personal tokens, lists and revokes tokens.
type TokenStore interface {
	AuthorityStore
	auth.PersonalTokenStore
	RevokeToken(ctx context.Context, id, owner int64, who scangate.Who, now time.Time) error
	TokensPage(ctx context.Context, userID int64, now time.Time, limit int, after map[string]string) (scangate.Page[scangate.Token], error)
}

// tokenMetaBody is a token as GET /auth/tokens lists it: never its secret.
type tokenMetaBody struct {
	ID         int64          `json:"id"`
	Kind       string         `json:"kind"`
	Name       *string        `json:"name"`
	Scope      string         `json:"scope"`
	CreatedAt  scangate.Time  `json:"created_at"`
	ExpiresAt  scangate.Time  `json:"expires_at"`
	LastUsedAt *scangate.Time `json:"last_used_at"`
	Repos      []repoBody     `json:"repos"`
}

// repoBody is a repository a token is scoped to.
type repoBody struct {
	VcID   int64 `json:"vc_id"`
	RepoID int64 `json:"repo_id"`
}

// reposJSON is a token's repositories as the API shows them: null for a
// token of every repository.
func reposJSON(repos []scangate.RepoRef) []repoBody {
	if repos == nil {
		return nil
	}
	out := make([]repoBody, len(repos))
	for i, r := range repos {
		out[i] = repoBody{VcID: r.VcID, RepoID: r.RepoID}
	}
	return out
}

func tokenMetaJSON(t scangate.Token) tokenMetaBody {
	b := tokenMetaBody{ID: t.ID, Kind: t.Kind, Scope: t.Scope, CreatedAt: scangate.At(t.CreatedAt), ExpiresAt: scangate.At(t.ExpiresAt),
		Repos: reposJSON(t.Repos)}
	if t.Name != "" {
		b.Name = &t.Name
	}
	if !t.LastUsedAt.IsZero() {
		at := scangate.At(t.LastUsedAt)
		b.LastUsedAt = &at
	}
	return b
}

// ListTokens is GET /auth/tokens: the caller's login and personal tokens
// that are neither expired nor revoked, newest first, without secrets; an
// admin may ask for another user's with ?user_id=.
func ListTokens(st TokenStore, pg Cursors, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListTokens", Roles: everyRole, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			q := readQuery(req)
			user := q.id("user_id")
			if user != 0 && user != c.ID && c.Role != scangate.RoleAdmin {
				return Reply{}, scangate.Errorf(scangate.KindForbidden, "only an admin may list another user's tokens")
			}
			if user == 0 {
				user = c.ID
			}
			r, err := pg.read(q, "tokens", map[string]string{"user": fmt.Sprint(user)})
			if err != nil {
				return Reply{}, err
			}
			tokens, err := st.TokensPage(ctx, user, now(), r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, "/api/auth/tokens", r, tokens, tokenMetaJSON)
		}}
}

// personalTokenBody is a new personal token: the only answer that shows
// its secret.
type personalTokenBody struct {
	ID          int64          `json:"id"`
	Name        string         `json:"name"`
	Scope       string         `json:"scope"`
	CreatedAt   scangate.Time  `json:"created_at"`
	ExpiresAt   scangate.Time  `json:"expires_at"`
	LastUsedAt  *scangate.Time `json:"last_used_at"`
	Repos       []repoBody     `json:"repos"`
	AccessToken string         `json:"access_token"`
	TokenType   string         `json:"token_type"`
}

var everyRole = []scangate.Role{scangate.RoleAdmin, scangate.RoleUser, scangate.RoleReadonly}

// CreateToken is POST /auth/tokens: a personal token of the caller, for a
// CI job or a dashboard; 201 with the token, shown once.
func CreateToken(st TokenStore, fold Folder, now func() time.Time, log *slog.Logger) Endpoint {
	tokens := auth.PersonalTokens{Store: st, Now: now, Fold: fold}
	return Endpoint{Name: "CreateToken", Roles: everyRole, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			nt, err := readNewToken(m)
			if err != nil {
				return Reply{}, err
			}
			secret, t, err := tokens.Create(ctx, c.ID, nt, whoOf(c, req))
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Secret: true, Location: location(req, "/auth/tokens", t.ID), Body: personalTokenBody{
				ID: t.ID, Name: t.Name, Scope: t.Scope, CreatedAt: scangate.At(t.CreatedAt), ExpiresAt: scangate.At(t.ExpiresAt),
				Repos: reposJSON(t.Repos), AccessToken: secret, TokenType: "Bearer",
			}}, nil
		}}
}

func readNewToken(m members) (scangate.NewToken, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	nt := scangate.NewToken{Days: scangate.TokenDaysDefault, Scope: scangate.ScopeWrite}
	nt.Name, _ = f.str("name", true)
	if d, ok := f.integer("expires_in_days", false); ok {
		nt.Days = d
	}
	if s, ok := f.enum("scope", false, scangate.Scopes); ok {
		nt.Scope = s
	}
	nt.Repos = f.repoRefs("repos", false)
	f.done()
	if len(p) == 0 {
		nt.Validate(&p)
	}
	return nt, p.Err()
}

// RevokeToken is DELETE /auth/tokens/{token_id}: its owner or an admin
// revokes a token; another user's token is not found. 204.
func RevokeToken(st TokenStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RevokeToken", Roles: everyRole, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "token_id")
			if err != nil {
				return Reply{}, err
			}
			owner := c.ID
			if c.Role == scangate.RoleAdmin {
				owner = 0
			}
			if err := st.RevokeToken(ctx, id, owner, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusNoContent}, nil
		}}
}

// Logout is DELETE /auth/token: revokes the token the request carries
// (a read token may too). 204.
func Logout(st TokenStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "Logout", Roles: everyRole, Users: st, Now: now, ReadScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			if c.TokenID == 0 {
				return Reply{}, scangate.Errorf(scangate.KindUnauthorized, "the token has no id to revoke; it expires on its own")
			}
			if err := st.RevokeToken(ctx, c.TokenID, c.ID, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusNoContent}, nil
		}}
}
