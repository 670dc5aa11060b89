package webhook_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/events/webhook"
)

// fixed is a random source that always draws the same number.
type fixed float64

func (f fixed) Float64() float64 { return float64(f) }

func TestBackoffFollowsTheSchedule(t *testing.T) {
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	for i, w := range want {
		got, ok := webhook.Backoff(i+1, fixed(0.5)) // the middle of the jitter: no change
		if !ok || got != w {
			t.Errorf("after attempt %d: %v, %v; want %v, true", i+1, got, ok, w)
		}
	}
	if webhook.Attempts != 8 {
		t.Errorf("Attempts = %d, want 8", webhook.Attempts)
	}
	for _, attempt := range []int{8, 9, 0, -1} {
		if d, ok := webhook.Backoff(attempt, fixed(0.5)); ok {
			t.Errorf("after attempt %d: wait %v, want the delivery dead", attempt, d)
		}
	}
}

// Whatever the jitter draws, every wait stays within 10 % of the schedule
// and the waits add up to more than 24 hours.
func TestBackoffJitterKeepsMoreThan24Hours(t *testing.T) {
	var least, most time.Duration
	for attempt := 1; attempt < webhook.Attempts; attempt++ {
		lo, _ := webhook.Backoff(attempt, fixed(0))
		hi, _ := webhook.Backoff(attempt, fixed(0.999999999))
		base := webhook.Schedule[attempt-1]
		if lo != base-base/10 || hi > base+base/10 || hi <= base {
			t.Errorf("attempt %d: waits from %v to %v around %v", attempt, lo, hi, base)
		}
		least += lo
		most += hi
	}
	if least < 24*time.Hour {
		t.Fatalf("the shortest waits add up to %v, under 24 h", least)
	}
	t.Logf("a delivery is retried for %v to %v", least, most)

	r := rand.New(rand.NewPCG(1, 2))
	seen := map[time.Duration]bool{}
	for range 100 {
		d, _ := webhook.Backoff(3, r)
		if d < 27*time.Minute || d > 33*time.Minute {
			t.Fatalf("after attempt 3: %v, outside 30 min ± 10 %%", d)
		}
		seen[d] = true
	}
	if len(seen) < 90 {
		t.Fatalf("100 draws gave %d distinct waits: no jitter", len(seen))
	}
}

func TestShouldDisableAfterThreeDaysOfFailures(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		first time.Time
		now   time.Time
		want  bool
	}{
		{time.Time{}, start, false},
		{start, start, false},
		{start, start.Add(71*time.Hour + 59*time.Minute), false},
		{start, start.Add(72 * time.Hour), true},
		{start, start.Add(100 * time.Hour), true},
	}
	for _, c := range cases {
		if got := webhook.ShouldDisable(c.first, c.now); got != c.want {
			t.Errorf("failing since %v, at %v: %v, want %v", c.first, c.now, got, c.want)
		}
	}
}
