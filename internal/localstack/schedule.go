package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// rateOf reads EventBridge's rate expressions: rate(1 minute), rate(5 minutes), rate(2 hours).
func rateOf(expr string) (time.Duration, error) {
	inner, ok := strings.CutPrefix(expr, "rate(")
	inner, ok2 := strings.CutSuffix(inner, ")")
	num, unit, ok3 := strings.Cut(inner, " ")
	n, err := strconv.Atoi(num)
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour}
	if !ok || !ok2 || !ok3 || err != nil || n < 1 || units[unit] == 0 {
		return 0, fmt.Errorf("schedule %q: only rate(N minutes) and rate(N hours) run locally", expr)
	}
	return time.Duration(n) * units[unit], nil
}

// RunSchedules invokes, until ctx ends, every function of the template
// that an EventBridge schedule invokes, at its rate, with the event
// EventBridge sends; a failure is logged, as Lambda would.
func (s *Stack) RunSchedules(ctx context.Context, log *slog.Logger) error {
	for id, expr := range s.schedules {
		every, err := rateOf(expr)
		if err != nil {
			return err
		}
		if s.every > 0 {
			every = s.every
		}
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					if _, err := s.Invoke(ctx, id, scheduledEvent(id, now)); err != nil {
						log.ErrorContext(ctx, "scheduled function failed", "function", id, "error", err.Error())
					}
				}
			}
		}()
	}
	return nil
}

// scheduledEvent is the event EventBridge sends a scheduled function.
func scheduledEvent(function string, at time.Time) []byte {
	b, _ := json.Marshal(events.EventBridgeEvent{Version: "0", ID: strconv.FormatInt(at.UnixNano(), 36), DetailType: "Scheduled Event",
		Source: "aws.events", AccountID: "123456789012", Time: at.UTC(), Region: "us-east-1",
		Resources: []string{"arn:aws:events:us-east-1:123456789012:rule/" + function}, Detail: json.RawMessage("{}")})
	return b
}
