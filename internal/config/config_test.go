package config_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/metrics"
)

// TestKeysAreNotInTheEnvironment: a key in a function's environment is in
// its configuration, readable by whoever may read the configuration; a
// function with CURSOR_KEY or SECRETS_KEY set refuses to start (the keys
// are read from Secrets Manager), and the error does not show the value.
func TestKeysAreNotInTheEnvironment(t *testing.T) {
	for _, name := range []string{"CURSOR_KEY", "SECRETS_KEY"} {
		value := strings.Repeat("Ab9x", 16)
		_, err := config.Load(func(n string) string {
			return map[string]string{"TABLE_NAME": "t", name: value}[n]
		})
		if err == nil || !strings.Contains(err.Error(), name+"_ID") || strings.Contains(err.Error(), value) {
			t.Errorf("%s set: %v", name, err)
		}
	}
	if _, err := config.Load(func(n string) string {
		return map[string]string{"TABLE_NAME": "t", "CURSOR_KEY_ID": "arn:aws:secretsmanager:us-east-1:1:secret:c", "SECRETS_KEY_ID": "s"}[n]
	}); err != nil {
		t.Errorf("the keys' ids: %v", err)
	}
}

// TestEgressSettings: the outbound switches are off unless set to true;
// another value refuses to start; the dashboard's URL loses its trailing
// slash.
func TestEgressSettings(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(name string) string {
			if name == "TABLE_NAME" {
				return "t"
			}
			return vars[name]
		}
	}
	c, err := config.Load(env(nil))
	if err != nil || c.LoopbackHTTP || c.PrivateIntegrations || c.DashboardURL != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = config.Load(env(map[string]string{"EGRESS_LOOPBACK_HTTP": "true", "INTEGRATIONS_PRIVATE_NETWORK": "true",
		"DASHBOARD_URL": "https://d.example.com/"}))
	if err != nil || !c.LoopbackHTTP || !c.PrivateIntegrations || c.DashboardURL != "https://d.example.com" {
		t.Fatalf("set: %+v %v", c, err)
	}
	for _, name := range []string{"EGRESS_LOOPBACK_HTTP", "INTEGRATIONS_PRIVATE_NETWORK"} {
		if _, err := config.Load(env(map[string]string{name: "yes"})); err == nil {
			t.Errorf("%s=yes was taken", name)
		}
	}
}

// TestDashboardOrigin: DASHBOARD_ORIGIN is one origin, exactly as a
// browser's Origin header names it; anything wider or else fails Load.
func TestDashboardOrigin(t *testing.T) {
	env := func(origin string) func(string) string {
		return func(name string) string {
			return map[string]string{"TABLE_NAME": "t", "DASHBOARD_ORIGIN": origin}[name]
		}
	}
	for _, ok := range []string{"", "https://d111111abcdef8.cloudfront.net", "http://127.0.0.1:3000", "https://dash.example.com:8443"} {
		if c, err := config.Load(env(ok)); err != nil || c.DashboardOrigin != ok {
			t.Errorf("%q: %q, %v", ok, c.DashboardOrigin, err)
		}
	}
	for _, bad := range []string{"*", "null", "d111111abcdef8.cloudfront.net", "https://dash.example.com/", "https://dash.example.com/app",
		"ftp://dash.example.com", "https://", "https://user@dash.example.com", "https://dash.example.com?x", "https://dash.example.com#"} {
		if _, err := config.Load(env(bad)); err == nil {
			t.Errorf("DASHBOARD_ORIGIN %q was accepted", bad)
		}
	}
}

// A log quieter than INFO keeps the metric lines, written as level METRIC:
// the alarms read them (WorkBacklogAlarm breaches on missing data).
func TestMetricLinesPassEveryLevel(t *testing.T) {
	var b bytes.Buffer
	log := config.Config{LogLevel: slog.LevelError}.Logger(&b)
	log.Info("dropped")
	metrics.New(log).Emit(context.Background(), nil, metrics.CountOf("Requests", 1))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"level":"METRIC"`) || !strings.Contains(lines[0], `"Requests":1`) {
		t.Fatalf("want one metric line at level METRIC, got %q", b.String())
	}
	if err := metrics.Check([]byte(lines[0])); err != nil {
		t.Fatal(err)
	}
}
