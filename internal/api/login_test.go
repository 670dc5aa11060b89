package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/auth"
)

func (h *harness) login(username, password string) events.APIGatewayProxyResponse {
	h.t.Helper()
	b, _ := json.Marshal(map[string]string{"username": username, "password": password})
	return h.call("login", jsonReq(nil, string(b)))
}

// authorize runs the real authorizer on a token.
func (h *harness) authorize(token string) error {
	a := auth.Authorizer{Store: h.env.Store, Now: time.Now, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	_, err := a.Handle(context.Background(), events.APIGatewayCustomAuthorizerRequest{AuthorizationToken: "Bearer " + token, MethodArn: "arn:aws:execute-api:us-east-1:1:a/prod/GET/api/x"})
	return err
}

func TestLogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var resp events.APIGatewayProxyResponse
	trips := h.env.CountTrips(func() { resp = h.login("ADMIN", adminPassword) })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", resp.StatusCode, resp.Body)
	}
	// Read the username and the login's places, reserve one, write the
	// token (with the place given back and the audit entry); the token's
	// id is allocated beside the reservation, so it adds a request but no
	// wait.
	if trips > 4 {
		t.Errorf("login took %d requests; budget 2 plus the token write (and its id)", trips)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &tok); err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || len(tok.AccessToken) < 64 {
		t.Fatalf("token response %s", resp.Body)
	}
	if err := h.authorize(tok.AccessToken); err != nil {
		t.Fatalf("the new token is refused: %v", err)
	}
	// Only the token's hash is stored.
	for _, it := range h.items() {
		for k, v := range it {
			if strings.Contains(v, tok.AccessToken) || strings.Contains(v, adminPassword) {
				t.Fatalf("attribute %s stores a secret in plain text", k)
			}
		}
	}
}

func TestLoginFailuresLookAlike(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	unknown := h.login("nobody", "whatever-password")
	wrong := h.login("admin", "wrong-password-1")
	expectProblem(t, unknown, 401)
	expectProblem(t, wrong, 401)
	if unknown.Body != wrong.Body || unknown.Headers["WWW-Authenticate"] != wrong.Headers["WWW-Authenticate"] {
		t.Fatalf("unknown user %s and wrong password %s answer differently", unknown.Body, wrong.Body)
	}
	ptrs := expectProblem(t, h.call("login", jsonReq(nil, `{"username":"admin"}`)), 422)
	if len(ptrs) != 1 || ptrs[0] != "/password" {
		t.Fatalf("pointers %v", ptrs)
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 5 {
		expectProblem(t, h.login("Admin", "wrong-password-"+strconv.Itoa(i)), 401)
	}
	for _, pw := range []string{"wrong-password-x", adminPassword} {
		resp := h.login("admin", pw)
		expectProblem(t, resp, 429)
		ra, err := strconv.Atoi(resp.Headers["Retry-After"])
		if err != nil || ra < 1 || ra > 15*60 {
			t.Fatalf("Retry-After %q; want seconds until the window passes", resp.Headers["Retry-After"])
		}
	}
	// Throttling is per username, existing or not.
	if resp := h.call("create-user", jsonReq(&h.admin, createBody("rita", "user"))); resp.StatusCode != 201 {
		t.Fatal(resp.Body)
	}
	if resp := h.login("rita", "password-of-rita"); resp.StatusCode != 200 {
		t.Fatalf("another user is throttled too: %d", resp.StatusCode)
	}
	for range 5 {
		expectProblem(t, h.login("ghost", "wrong-password-1"), 401)
	}
	expectProblem(t, h.login("GHOST", "wrong-password-1"), 429)
}

func TestDeactivatedUserLosesAccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.call("create-user", jsonReq(&h.admin, createBody("sam", "user")))
	resp := h.login("sam", "password-of-sam")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Body)
	}
	token := decode(t, resp)["access_token"].(string)
	if err := h.authorize(token); err != nil {
		t.Fatal(err)
	}
	if resp := h.call("update-user", update(h, "2", `{"role":"user","active":false,"user_email":"sam@example.com"}`)); resp.StatusCode != 200 {
		t.Fatal(resp.Body)
	}
	expectProblem(t, h.login("sam", "password-of-sam"), 401)
	if err := h.authorize(token); err == nil || err.Error() != "Unauthorized" {
		t.Fatalf("a deactivated user's token still works: %v", err)
	}
}
