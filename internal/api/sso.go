package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/scangate"
)

// SSO signs a person in from what the provider sent back (internal/sso's
// Session).
type SSO interface {
	SignIn(ctx context.Context, r auth.SSORequest, who scangate.Who) (auth.Issued, error)
}

// OIDCSession is POST /auth/oidc/session: no bearer token needed;
// {"code","code_verifier","redirect_uri","nonce"} from the dashboard's
// authorization request answers 200 with a session token as a login's.
func OIDCSession(s SSO, log *slog.Logger) Endpoint {
	return Endpoint{Name: "OIDCSession", Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			r, err := readSSORequest(m)
			if err != nil {
				return Reply{}, err
			}
			who := anonymousWho(req)
			issued, err := s.SignIn(ctx, r, who)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: bearerBody(issued.Token, issued.ExpiresIn), Secret: true}, nil
		}}
}

func readSSORequest(m members) (auth.SSORequest, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var r auth.SSORequest
	r.Code, _ = f.str("code", true)
	r.CodeVerifier, _ = f.str("code_verifier", true)
	r.RedirectURI, _ = f.str("redirect_uri", true)
	r.Nonce, _ = f.str("nonce", true)
	f.done()
	if len(p) == 0 {
		if n := len(r.Code); n < 1 || n > 2048 || !visible(r.Code) {
			p.Add("/code", "must be 1 to 2048 visible ASCII characters, as the provider sent it")
		}
		// RFC 7636 section 4.1: 43 to 128 unreserved characters.
		if n := len(r.CodeVerifier); n < 43 || n > 128 || !unreserved(r.CodeVerifier) {
			p.Add("/code_verifier", "must be 43 to 128 of A-Z, a-z, 0-9 and - . _ ~ (RFC 7636)")
		}
		if n := len(r.Nonce); n < 16 || n > 256 || !unreserved(r.Nonce) {
			p.Add("/nonce", "must be 16 to 256 of A-Z, a-z, 0-9 and - . _ ~")
		}
		if u, err := url.Parse(r.RedirectURI); err != nil || len(r.RedirectURI) > 2048 || u.Host == "" ||
			u.Scheme != "https" && u.Scheme != "http" || u.User != nil || u.Fragment != "" {
			p.Add("/redirect_uri", "must be the http(s) URL the authorization request named, without a fragment")
		}
	}
	return r, p.Err()
}

func visible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func unreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
