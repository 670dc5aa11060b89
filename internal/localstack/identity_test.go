package localstack_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

// TestJunkAuthorizationNeverReachesTheAuthorizer: the template's identity
// validation expression (which the local server honours as API Gateway
// does) refuses a header that is not a scangate token with 401, without
// running the authorizer; a token of the right shape runs it.
func TestJunkAuthorizationNeverReachesTheAuthorizer(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var logs syncBuffer
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	real, _ := auth.NewToken(1)
	for _, junk := range []string{"abc", "Basic YWRtaW46cGFzcw==", "Bearer", "Bearer abc", "Bearer " + strings.ToUpper(real),
		"Bearer " + real + "x", "Bearer sgt_0_" + strings.Repeat("a", 72), "Bearer " + strings.Repeat("x", 5000)} {
		if resp, _ := doAuth(t, srv.URL+"/api/pr/scan/1", junk); resp != 401 {
			t.Errorf("Authorization %.30q: %d; want 401", junk, resp)
		}
	}
	if strings.Contains(logs.String(), `"operation":"Authorize"`) {
		t.Fatalf("a junk header ran the authorizer:\n%s", logs.String())
	}
	for _, shaped := range []string{"Bearer " + real, "bearer  " + real} {
		if code, _ := doAuth(t, srv.URL+"/api/pr/scan/1", shaped); code != 401 {
			t.Errorf("an unknown token %q: %d; want 401", shaped[:10], code)
		}
	}
	if n := strings.Count(logs.String(), `"operation":"Authorize"`); n != 2 {
		t.Errorf("the authorizer ran %d times for 2 tokens of the right shape", n)
	}
}

// doAuth sends a GET with the Authorization header as given.
func doAuth(t *testing.T, url, header string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
