package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/scangate"
)

// TrustStore keeps the trusts of CI id tokens.
type TrustStore interface {
	AuthorityStore
	Trust(ctx context.Context, name string) (scangate.Trust, error)
	PutTrust(ctx context.Context, t scangate.Trust, who scangate.Who, now time.Time) (scangate.Trust, error)
	DeleteTrust(ctx context.Context, name string, who scangate.Who, now time.Time) error
}

// trustName reads the path's trust name: [a-z0-9-]{1,64}, or a 422.
func trustName(req events.APIGatewayProxyRequest) (string, error) {
	s := req.PathParameters["name"]
	if !scangate.ValidTrustName(s) {
		return "", &scangate.Error{Kind: scangate.KindInvalid, Detail: "the path's name must be 1 to 64 of a-z, 0-9 and -",
			Fields: []scangate.FieldError{{Pointer: "/name", Detail: "must match [a-z0-9-]{1,64}"}}}
	}
	return s, nil
}

// PutOIDCTrust is PUT /auth/oidc/trust/{name}: {"issuer","audience",
// "repos":[{"vc_id","repo_id"}],"conditions":{claim: glob}} lets the id
// tokens of that issuer for that audience, naming one of those
// repositories and matching every condition, be exchanged for scan tokens
// of their repository. The issuer's URL passes the outbound rules (its
// keys are fetched through them).
func PutOIDCTrust(st TrustStore, rules egress.Policy, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "PutOIDCTrust", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			name, err := trustName(req)
			if err != nil {
				return Reply{}, err
			}
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			t, err := readTrust(m, rules)
			if err != nil {
				return Reply{}, err
			}
			t.Name = name
			if t, err = st.PutTrust(ctx, t, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewTrust(t)}, nil
		}}
}

func readTrust(m members, rules egress.Policy) (scangate.Trust, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var t scangate.Trust
	if u, ok := f.str("issuer", true); ok {
		if _, err := rules.CheckURL(u); err != nil {
			p.Add("/issuer", "%s", err.Error())
		}
		t.Issuer = u
	}
	t.Audience, _ = f.str("audience", true)
	t.Repos = f.repoRefs("repos", true)
	if raw := f.rawObject("conditions"); raw != nil {
		if err := json.Unmarshal(raw, &t.Conditions); err != nil {
			p.Add("/conditions", "must map claims' names to globs (strings)")
		}
	}
	f.done()
	if len(p) == 0 {
		scangate.ValidateTrust(&p, t)
	}
	return t, p.Err()
}

// GetOIDCTrust is GET /auth/oidc/trust/{name}.
func GetOIDCTrust(st TrustStore, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetOIDCTrust", Roles: adminOnly, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			name, err := trustName(req)
			if err != nil {
				return Reply{}, err
			}
			t, err := st.Trust(ctx, name)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewTrust(t)}, nil
		}}
}

// DeleteOIDCTrust is DELETE /auth/oidc/trust/{name}: 204; its id tokens
// are refused from then on.
func DeleteOIDCTrust(st TrustStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "DeleteOIDCTrust", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			name, err := trustName(req)
			if err != nil {
				return Reply{}, err
			}
			if err := st.DeleteTrust(ctx, name, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusNoContent}, nil
		}}
}
