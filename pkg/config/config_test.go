package config_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/metrics"
)

// TestCursorKey: CURSOR_KEY is base64 of at least 32 bytes; anything else
// fails Load without showing the value, and a listing function refuses to
// start without one.
func TestCursorKey(t *testing.T) {
	env := func(key string) func(string) string {
		return func(name string) string {
			return map[string]string{"TABLE_NAME": "t", "CURSOR_KEY": key}[name]
		}
	}
	c, err := config.Load(env(strings.Repeat("Ab9x", 16)))
	_, cerr := api.NewCursors(c.CursorKey)
	if err != nil || len(c.CursorKey) != 48 || cerr != nil {
		t.Fatalf("64 base64 letters: %d bytes, %v, %v", len(c.CursorKey), err, cerr)
	}
	if !bytes.Equal(c.CursorKey[:3], []byte{0x01, 0xbf, 0x71}) {
		t.Errorf("decoded %x", c.CursorKey[:3])
	}
	for _, bad := range []string{"c2hvcnQ=", strings.Repeat("A", 40), "not base64 at all, but long enough to be a key!!", strings.Repeat("A", 63)} {
		if _, err := config.Load(env(bad)); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("CURSOR_KEY %q: %v", bad, err)
		}
	}
	c, err = config.Load(env(""))
	if _, cerr := api.NewCursors(c.CursorKey); err != nil || cerr == nil {
		t.Errorf("no CURSOR_KEY: %v, %v", err, cerr)
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
