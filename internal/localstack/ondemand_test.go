package localstack_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

// TestClockAndRunScheduled: Options.Now is every function's clock, and
// RunScheduled runs the expiry on demand: an allowlist created to expire
// in an hour (as the clock tells) suppresses its finding until the clock
// passes the hour and the expiry runs; then its PR blocks again.
func TestClockAndRunScheduled(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: 12 * time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stack.Close() }()
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	admin := loginToken(t, api, "admin", "admin-password-1")
	if err := stack.RunScheduled(context.Background(), "GetPrFunction", now()); err == nil {
		t.Error("RunScheduled ran a function no schedule invokes")
	}
	scan := `{"scan_type":"SECRET","status":"completed","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,` +
		`"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`
	if resp, body := do(t, "POST", api+"/pr/scan", admin, scan); resp.StatusCode != 201 {
		t.Fatalf("record: %d %s", resp.StatusCode, body)
	}
	// Six hours ahead on the stack's clock, the expiry an hour later.
	offset.Store(int64(6 * time.Hour))
	expires := now().Add(time.Hour).UTC().Format(time.RFC3339)
	if resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"SECRET","name":"sha256:aa","global_":true,"reason":"used_in_tests","expires_at":"`+expires+`"}`); resp.StatusCode != 201 {
		t.Fatalf("allowlist: %d %s", resp.StatusCode, body)
	}
	blocked := func() string {
		_, body := do(t, "GET", api+"/pr?blocked=true", admin, "")
		return body
	}
	if b := blocked(); strings.Contains(b, `"pr_id":4`) {
		t.Fatalf("the allowlisted PR is blocked: %s", b)
	}
	// The expiry has not passed: running the schedule changes nothing.
	if err := stack.RunScheduled(context.Background(), "ExpireAllowlistsFunction", now()); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, "GET", api+"/whitelist/1", admin, ""); !strings.Contains(body, `"expired":false`) {
		t.Fatalf("before its expiry: %s", body)
	}
	// Past the expiry on the stack's clock (hours before it in real time).
	offset.Add(int64(2 * time.Hour))
	if err := stack.RunScheduled(context.Background(), "ExpireAllowlistsFunction", now()); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, "GET", api+"/whitelist/1", admin, ""); !strings.Contains(body, `"expired":true`) {
		t.Errorf("after its expiry: %s", body)
	}
	if b := blocked(); !strings.Contains(b, `"pr_id":4`) {
		t.Errorf("after the expiry, the PR is not blocked: %s", b)
	}
}
