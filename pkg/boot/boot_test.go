package boot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/boot"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/fold"
)

// TestHandlerCORS: every API function a main starts answers the
// dashboard's origin with CORS, even its refusals (a missing token's
// 401); functions of other kinds are started as built.
func TestHandlerCORS(t *testing.T) {
	const dash = "https://d111111abcdef8.cloudfront.net"
	d := api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now, Config: config.Config{DashboardOrigin: dash},
		Passwords: password.Argon2id{}, Fold: fold.Fold}
	for _, op := range api.Operations() {
		if op.API == nil {
			if h, built := boot.Handler(op.Handler, d), op.Handler(d); fmt.Sprintf("%T", h) != fmt.Sprintf("%T", built) {
				t.Errorf("%s: started as %T; built as %T", op.Name, h, built)
			}
			continue
		}
		ah, ok := boot.Handler(op.API, d).(api.Handler)
		if !ok {
			t.Fatalf("%s: the started handler is not an api.Handler", op.Name)
		}
		resp, err := ah(context.Background(), events.APIGatewayProxyRequest{Headers: map[string]string{"Origin": dash}, HTTPMethod: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Headers["Access-Control-Allow-Origin"] != dash {
			t.Errorf("%s: %d without Access-Control-Allow-Origin: %v", op.Name, resp.StatusCode, resp.Headers)
		}
	}
}
