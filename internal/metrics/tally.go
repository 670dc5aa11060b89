package metrics

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Tally adds up the metric lines a logger writes, as CloudWatch does with
// a function's log: the local stack wraps its logger's handler with one
// and serves the sums to the dashboard's health page (in AWS, CloudWatch
// holds them and the operations dashboard graphs them).
type Tally struct {
	mu    sync.Mutex
	since time.Time
	stats map[string]*Stat
}

// Stat is what a tally holds of one metric under one dimension set (the
// full one a line names): how many values, their sum, the largest and the
// last.
type Stat struct {
	Name  string            `json:"name"`
	Dims  map[string]string `json:"dimensions"`
	Unit  string            `json:"unit"`
	Count int               `json:"count"`
	Sum   float64           `json:"sum"`
	Max   float64           `json:"max"`
	Last  float64           `json:"last"`
}

// NewTally is an empty tally counting from since.
func NewTally(since time.Time) *Tally { return &Tally{since: since, stats: map[string]*Stat{}} }

// Since is when the tally began.
func (t *Tally) Since() time.Time { return t.since }

// Stats are the tally's metrics, by name and dimensions.
func (t *Tally) Stats() []Stat {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Stat, 0, len(t.stats))
	for _, s := range t.stats {
		c := *s
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Stat) int { return strings.Compare(statKey(a.Name, a.Dims), statKey(b.Name, b.Dims)) })
	return out
}

func statKey(name string, dims map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range slices.Sorted(maps.Keys(dims)) {
		b.WriteString("\x00" + k + "=" + dims[k])
	}
	return b.String()
}

// add counts the metrics of one record written by Emit.
func (t *Tally) add(r slog.Record) {
	var meta *awsMember
	values := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "_aws" {
			if m, ok := a.Value.Any().(awsMember); ok {
				meta = &m
			}
			return true
		}
		values[a.Key] = a.Value
		return true
	})
	if meta == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range meta.CloudWatchMetrics {
		dims := map[string]string{}
		if len(d.Dimensions) > 0 {
			for _, k := range d.Dimensions[0] {
				dims[k] = values[k].String()
			}
		}
		for _, m := range d.Metrics {
			v, ok := values[m.Name]
			if !ok || v.Kind() != slog.KindFloat64 {
				continue
			}
			key := statKey(m.Name, dims)
			s := t.stats[key]
			if s == nil {
				s = &Stat{Name: m.Name, Dims: dims, Unit: m.Unit, Max: v.Float64()}
				t.stats[key] = s
			}
			s.Count++
			s.Sum += v.Float64()
			s.Max = max(s.Max, v.Float64())
			s.Last = v.Float64()
		}
	}
}

// Handler is next, with the metric lines it is given counted first (even
// those its level drops).
func (t *Tally) Handler(next slog.Handler) slog.Handler { return tallyHandler{t: t, next: next} }

type tallyHandler struct {
	t    *Tally
	next slog.Handler
}

func (h tallyHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h tallyHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == logMessage {
		h.t.add(r)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h tallyHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return tallyHandler{t: h.t, next: h.next.WithAttrs(as)}
}

func (h tallyHandler) WithGroup(name string) slog.Handler {
	return tallyHandler{t: h.t, next: h.next.WithGroup(name)}
}
