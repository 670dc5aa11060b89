package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

// IDTokenExchanger exchanges a CI job's id token for a scan token
// (internal/ciauth.Exchange; an interface, so that no other function links
// the OpenID Connect libraries).
type IDTokenExchanger interface {
	Exchange(ctx context.Context, raw string, who scangate.Who) (auth.Issued, error)
}

// exchangeBody is the answer of the exchange: a token as a login's, with
// its scope and its repository.
type exchangeBody struct {
	tokenBody
	Scope string                   `json:"scope"`
	Repos []scangate.TrustRepoView `json:"repos"`
}

// maxExchangeBody bounds the exchange's body: an id token and its
// member's name.
const maxExchangeBody = 20 << 10

// ExchangeOIDCToken is POST /auth/oidc/token: no bearer token needed;
// {"id_token"} from a CI job is answered 200 with a scan token of the
// repository its claims name when a trust lets it in, 401 otherwise.
func ExchangeOIDCToken(x IDTokenExchanger, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ExchangeOIDCToken", Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := bodyUpTo(req, maxExchangeBody)
			if err != nil {
				return Reply{}, err
			}
			var p scangate.Problems
			f := readFields(m, "", &p)
			raw, ok := f.str("id_token", true)
			f.done()
			if ok && (raw == "" || len(raw) > maxIDToken) {
				p.Add("/id_token", "must be 1 to %d bytes", maxIDToken)
			}
			if err := p.Err(); err != nil {
				return Reply{}, err
			}
			who := anonymousWho(req)
			issued, err := x.Exchange(ctx, raw, who)
			if err != nil {
				return Reply{}, err
			}
			b := exchangeBody{tokenBody: bearerBody(issued.Token, issued.ExpiresIn),
				Scope: scangate.ScopeScan, Repos: make([]scangate.TrustRepoView, len(issued.Repos))}
			for i, r := range issued.Repos {
				b.Repos[i] = scangate.TrustRepoView(r)
			}
			return Reply{Status: http.StatusOK, Body: b, Secret: true}, nil
		}}
}

// maxIDToken is the longest id token taken, in bytes (GitHub's and
// GitLab's are 1 to 2 KiB).
const maxIDToken = 16 << 10
