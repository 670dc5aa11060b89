package webhook

import "time"

// Schedule is the wait after each failed attempt before the next one: the
// Standard Webhooks schedule, about 27 h 35 min in all. After the last
// attempt (the 8th) the delivery is dead: dead-lettered and marked failed.
var Schedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// Attempts is how many attempts a delivery gets.
var Attempts = len(Schedule) + 1

// Jitter is the most a wait is moved, either way, as a fraction of it
// (10 %): deliveries that failed together spread out, and the waits still
// add up to more than 24 hours (at least 24 h 49 min).
const Jitter = 0.10

// DisableAfter is how long a subscription's deliveries may keep failing,
// without one success, before the subscription is disabled.
const DisableAfter = 72 * time.Hour

// Rand is a source of random numbers in [0, 1) (*math/rand/v2.Rand is one).
type Rand interface{ Float64() float64 }

// Backoff returns how long to wait after the failed attempt number attempt
// (1 for the first) before the next, with jitter drawn from r, and false
// when that attempt was the last: the delivery is dead.
func Backoff(attempt int, r Rand) (time.Duration, bool) {
	if attempt < 1 || attempt > len(Schedule) {
		return 0, false
	}
	wait := Schedule[attempt-1]
	spread := (2*r.Float64() - 1) * Jitter // in [-Jitter, Jitter)
	return wait + time.Duration(spread*float64(wait)), true
}

// ShouldDisable reports whether a subscription must be disabled at now,
// its current streak of failed deliveries having begun at firstFailure
// (the zero time: no failure since its last success).
func ShouldDisable(firstFailure, now time.Time) bool {
	return !firstFailure.IsZero() && now.Sub(firstFailure) >= DisableAfter
}
