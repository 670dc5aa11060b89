package localstack

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/scangate"
)

// HealthPath is the local stack's own route for the dashboard's health
// page: the metrics its functions wrote since it started, added up
// (metrics.Tally), for admins. No deployment has it: in AWS, CloudWatch
// holds the metrics and the stack's operations dashboard graphs them.
const HealthPath = "/api/local/health"

// Health is the answer of HealthPath.
type Health struct {
	Since   time.Time      `json:"since"`
	Metrics []metrics.Stat `json:"metrics"`
}

// health serves HealthPath in front of api, the caller's token checked by
// the stack's own authorizer, as API Gateway would.
func (s *Stack) health(api http.Handler, authorize gateway.AuthorizerHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != HealthPath {
			api.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeProblem(w, http.StatusMethodNotAllowed, "only GET reads the local metrics")
			return
		}
		if authorize == nil {
			writeProblem(w, http.StatusNotFound, "no authorizer to check the caller")
			return
		}
		resp, err := authorize(r.Context(), events.APIGatewayCustomAuthorizerRequest{Type: "TOKEN",
			AuthorizationToken: r.Header.Get("Authorization"), MethodArn: "arn:aws:execute-api:us-east-1:000000000000:local/local/GET/api/local/health"})
		switch {
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer realm="scangate"`)
			writeProblem(w, http.StatusUnauthorized, "a valid bearer token is required")
			return
		case resp.Context["role"] != string(scangate.RoleAdmin):
			writeProblem(w, http.StatusForbidden, "only admins read the local metrics")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(Health{Since: s.tally.Since().UTC(), Metrics: s.tally.Stats()})
	})
}

func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(scangate.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}
