package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/scangate"
)

// Logins issues tokens for passwords.
type Logins interface {
	Login(ctx context.Context, username, password string, who scangate.Who) (auth.Issued, error)
}

type tokenBody struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// Login is POST /auth/token: no bearer token needed; 200 with a token.
func Login(l Logins, log *slog.Logger) Endpoint {
	return Endpoint{Name: "Login", Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			var p scangate.Problems
			f := readFields(m, "", &p)
			username, _ := f.str("username", true)
			password, _ := f.str("password", true)
			f.done()
			if err := p.Err(); err != nil {
				return Reply{}, err
			}
			who := scangate.Who{RequestID: req.RequestContext.RequestID, SourceIP: req.RequestContext.Identity.SourceIP}
			issued, err := l.Login(ctx, username, password, who)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: tokenBody{
				AccessToken: issued.Token, TokenType: "Bearer", ExpiresIn: int64(issued.ExpiresIn.Seconds()),
			}, Secret: true}, nil
		}}
}
