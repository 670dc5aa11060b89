package metrics_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/metrics"
)

// TestTally: a tally wrapping a logger's handler adds up what Emit writes
// under each full dimension set (count, sum, largest, last), also when
// the logger's level drops the lines, and lets every line through that
// the level keeps.
func TestTally(t *testing.T) {
	tally := metrics.NewTally(time.Now())
	var buf bytes.Buffer
	log := slog.New(tally.Handler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	m := metrics.New(log)
	ctx := context.Background()
	ok := []metrics.Dim{{Name: metrics.DimRoute, Value: "GET /api/me"}, {Name: metrics.DimStatusClass, Value: "2xx"}}
	m.Emit(ctx, ok, metrics.CountOf(metrics.Requests, 1), metrics.Millis(metrics.Latency, 30*time.Millisecond))
	m.Emit(ctx, ok, metrics.CountOf(metrics.Requests, 1), metrics.Millis(metrics.Latency, 10*time.Millisecond))
	m.Emit(ctx, []metrics.Dim{{Name: metrics.DimRoute, Value: "GET /api/me"}, {Name: metrics.DimStatusClass, Value: "5xx"}}, metrics.CountOf(metrics.Requests, 1))
	log.Warn("kept")
	got := map[string]metrics.Stat{}
	for _, s := range tally.Stats() {
		got[s.Name+" "+s.Dims[metrics.DimStatusClass]] = s
	}
	if s := got["Requests 2xx"]; s.Count != 2 || s.Sum != 2 || s.Dims[metrics.DimRoute] != "GET /api/me" {
		t.Errorf("2xx requests %+v", s)
	}
	if s := got["Latency 2xx"]; s.Count != 2 || s.Sum != 40 || s.Max != 30 || s.Last != 10 || s.Unit != metrics.Milliseconds {
		t.Errorf("latency %+v", s)
	}
	if s := got["Requests 5xx"]; s.Sum != 1 || len(got) != 3 {
		t.Errorf("5xx requests %+v of %v", s, got)
	}
	// A WARN logger keeps the metric lines (their level is above ERROR) and
	// drops INFO.
	if bytes.Count(buf.Bytes(), []byte("\n")) != 4 || !bytes.Contains(buf.Bytes(), []byte(`"kept"`)) {
		t.Errorf("the logger wrote %s", buf.Bytes())
	}
}
