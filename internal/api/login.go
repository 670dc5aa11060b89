package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

// AuthorizerHandler is the signature of the TOKEN authorizer.
type AuthorizerHandler func(context.Context, events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// Authorizer is API Gateway's TOKEN authorizer (internal/auth): it reads the
// token and its user, and answers the caller as its context.
func Authorizer(st auth.AuthorizerStore, now func() time.Time, log *slog.Logger) AuthorizerHandler {
	return auth.Authorizer{Store: st, Now: now, Log: log}.Handle
}

type tokenBody struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// Login is POST /auth/token: no bearer token needed; 200 with a token
// that lives tokenTTL. With passwordLoginOff (PASSWORD_LOGIN=false: the
// deployment's people sign in through single sign-on) every login is
// refused 403 before anything is read or counted.
func Login(st auth.LoginStore, passwords auth.PasswordChecker, tokenTTL time.Duration, passwordLoginOff bool, now func() time.Time, log *slog.Logger) Endpoint {
	l := auth.Login{Store: st, Passwords: passwords, TokenTTL: tokenTTL, Now: now}
	return Endpoint{Name: "Login", Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			if passwordLoginOff {
				return Reply{}, scangate.Errorf(scangate.KindForbidden,
					"password login is switched off in this deployment: sign in with single sign-on (POST /auth/oidc/session, the dashboard's \"Sign in with single sign-on\")")
			}
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
			who := anonymousWho(req)
			issued, err := l.Login(ctx, username, password, who)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: bearerBody(issued.Token, issued.ExpiresIn), Secret: true}, nil
		}}
}
