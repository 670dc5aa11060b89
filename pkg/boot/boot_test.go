package boot_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/config"
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
