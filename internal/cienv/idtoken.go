package cienv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// GitLabIDTokenVar is the variable a GitLab job names in its id_tokens
// for scangate (id_tokens: SCANGATE_ID_TOKEN: aud: ...).
const GitLabIDTokenVar = "SCANGATE_ID_TOKEN"

// IDToken is an OpenID Connect id token the CI offers the job, and where
// it came from (for a message).
type IDToken struct {
	Token  string
	Source string // "GitHub Actions" or GitLabIDTokenVar; "" when none
}

// ReadIDToken gets the id token the CI offers the job for audience:
// GitHub Actions' (a job with permissions id-token: write has
// ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN; the
// token is asked for with hc, for audience), else the one GitLab put in
// SCANGATE_ID_TOKEN (its audience is the job's id_tokens' aud). None is
// the zero IDToken and no error.
func ReadIDToken(ctx context.Context, getenv func(string) string, hc *http.Client, audience string) (IDToken, error) {
	reqURL, reqToken := getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if reqURL != "" && reqToken != "" {
		tok, err := githubIDToken(ctx, hc, reqURL, reqToken, audience)
		if err != nil {
			return IDToken{}, fmt.Errorf("GitHub Actions' id token: %w", err)
		}
		return IDToken{Token: tok, Source: "GitHub Actions"}, nil
	}
	if tok := strings.TrimSpace(getenv(GitLabIDTokenVar)); tok != "" {
		return IDToken{Token: tok, Source: GitLabIDTokenVar}, nil
	}
	return IDToken{}, nil
}

// githubIDToken asks GitHub Actions' token service for an id token of
// audience: GET ACTIONS_ID_TOKEN_REQUEST_URL&audience=... with the
// request token as a bearer token; the answer is {"value": token}.
func githubIDToken(ctx context.Context, hc *http.Client, reqURL, reqToken, audience string) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL is not an http(s) URL")
	}
	q := u.Query()
	q.Set("audience", audience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+reqToken)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		// The URL holds no secret; the error may name it.
		return "", fmt.Errorf("the request failed: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the token service answered %d (does the job have permissions: id-token: write?)", resp.StatusCode)
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", fmt.Errorf("the token service's answer holds no token")
	}
	return out.Value, nil
}
