package boot_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/config"
)

// TestAPI: an API function's handler, as its main starts it, answers a
// request from the dashboard's origin with CORS, even when it refuses it
// (no token: 401), and a request from any other origin without; without a
// dashboard origin configured nothing is added.
func TestAPI(t *testing.T) {
	const dash = "https://d111111abcdef8.cloudfront.net"
	h := api.GetMe(nil, slog.New(slog.NewTextHandler(io.Discard, nil))).Handle
	call := func(origin string, e boot.Env) events.APIGatewayProxyResponse {
		resp, err := e.API(h)(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Headers: map[string]string{"Origin": origin}})
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("Origin %q: %d, %v", origin, resp.StatusCode, err)
		}
		return resp
	}
	withOrigin := boot.Env{Config: config.Config{DashboardOrigin: dash}}
	if resp := call(dash, withOrigin); resp.Headers["Access-Control-Allow-Origin"] != dash || resp.Headers["Vary"] != "Origin" {
		t.Errorf("from the dashboard: %v", resp.Headers)
	}
	if resp := call("https://evil.example", withOrigin); resp.Headers["Access-Control-Allow-Origin"] != "" {
		t.Errorf("from another origin: %v", resp.Headers)
	}
	if resp := call(dash, boot.Env{}); resp.Headers["Access-Control-Allow-Origin"] != "" || resp.Headers["Vary"] != "" {
		t.Errorf("without a dashboard origin: %v", resp.Headers)
	}
}

// TestSetMemoryLimit: a function sets the Go runtime's memory limit from
// the memory Lambda gives it (all but a tenth, at least 32 MiB left
// over); GOMEMLIMIT, when set, is the runtime's own and stays; outside
// Lambda nothing is set.
func TestSetMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	tenth := func(mib int64) int64 { return mib<<20 - mib<<20/10 }
	for mb, want := range map[string]int64{"128": 96 << 20, "256": 224 << 20, "1024": tenth(1024), "10240": tenth(10240)} {
		debug.SetMemoryLimit(before)
		if got := boot.SetMemoryLimit(env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", mb)); got != want || debug.SetMemoryLimit(-1) != want {
			t.Errorf("%s MB: the limit set is %d (the runtime's %d); want %d", mb, got, debug.SetMemoryLimit(-1), want)
		}
	}
	for name, e := range map[string]func(string) string{
		"GOMEMLIMIT set":  env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024", "GOMEMLIMIT", "300MiB"),
		"outside Lambda":  env(),
		"an unread value": env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "lots"),
	} {
		debug.SetMemoryLimit(before)
		if got := boot.SetMemoryLimit(e); got != -1 || debug.SetMemoryLimit(-1) != before {
			t.Errorf("%s: set %d", name, got)
		}
	}
}
