package auth

// SSORequest is what the dashboard posts to POST /auth/oidc/session once
// the organisation's OpenID provider sent the person back (internal/sso
// signs them in with it): the authorization code, the PKCE verifier of the
// request's challenge, the redirect URI the request named and the nonce
// it sent.
type SSORequest struct {
	Code         string
	CodeVerifier string
	RedirectURI  string
	Nonce        string
}
