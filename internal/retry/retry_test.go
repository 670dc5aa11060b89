package retry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/scangate"
)

func TestDoStopsWhenDone(t *testing.T) {
	calls := 0
	err := retry.Immediate.Do(context.Background(), "op", func(attempt int) (bool, error) {
		if attempt != calls {
			t.Fatalf("attempt %d on call %d", attempt, calls)
		}
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls; want nil after 3", err, calls)
	}
}

func TestDoReturnsTheWorkError(t *testing.T) {
	want := scangate.Errorf(scangate.KindConflict, "taken")
	calls := 0
	err := retry.Immediate.Do(context.Background(), "op", func(int) (bool, error) { calls++; return true, want })
	if err != want || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestDoGivesUpAsUnavailable(t *testing.T) {
	p := retry.Policy{Attempts: 5, NoDelay: true}
	calls := 0
	err := p.Do(context.Background(), "update user", func(int) (bool, error) { calls++; return false, nil })
	if calls != 5 {
		t.Errorf("%d calls; want 5", calls)
	}
	var de *scangate.Error
	if !errors.As(err, &de) || de.Kind != scangate.KindUnavailable || de.RetryAfter <= 0 {
		t.Fatalf("err %v; want unavailable with a retry hint", err)
	}
	if !errors.Is(err, retry.ErrExhausted) || !strings.Contains(err.Error(), "update user") {
		t.Errorf("err %q does not name the operation and the cause", err)
	}
}

func TestDoKeepsTheContextsKind(t *testing.T) {
	p := retry.Policy{Attempts: 100, Base: time.Millisecond, Max: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := p.Do(ctx, "settle", func(int) (bool, error) { return false, nil })
	if scangate.KindOf(err) != scangate.KindUnavailable || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a deadline: %v (kind %v); want unavailable wrapping the deadline", err, scangate.KindOf(err))
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = p.Do(ctx, "settle", func(int) (bool, error) { return false, nil })
	if scangate.KindOf(err) != scangate.KindGone || !errors.Is(err, context.Canceled) {
		t.Errorf("a cancellation: %v (kind %v); want gone", err, scangate.KindOf(err))
	}
}
