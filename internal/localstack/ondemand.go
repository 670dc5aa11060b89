package localstack

import (
	"context"
	"fmt"
	"time"
)

// RunScheduled invokes a function that an EventBridge schedule invokes,
// once, with the event EventBridge would send at at: tests run the
// allowlists' expiry when their clock has passed an expiry, instead of
// waiting for the minute.
func (s *Stack) RunScheduled(ctx context.Context, logicalID string, at time.Time) error {
	if _, ok := s.schedules[logicalID]; !ok {
		return fmt.Errorf("run scheduled: the template schedules no function %s", logicalID)
	}
	if _, err := s.Invoke(ctx, logicalID, scheduledEvent(logicalID, at)); err != nil {
		return fmt.Errorf("run scheduled %s: %w", logicalID, err)
	}
	return nil
}
