package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/ddbtest"
)

// TestConcurrentAbsentWritesMeetConflicts: two re-classifications of the
// same scan against the same baseline (the scheduled function resuming a
// step while the recording's own run still writes) put the same ABSENT
// items at once; DynamoDB cancels one transaction with a conflict
// (ddbtest plays the rule), and the puts, the same either way, are sent
// again rather than failing the work.
func TestConcurrentAbsentWritesMeetConflicts(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	before := env.Conflicts()
	for round := range 10 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() {
				n, err := env.Store.PutAbsentOf(ctx, int64(round+1), 7, 150)
				if err == nil && n != 150 {
					t.Errorf("round %d: %d ABSENT items written; want 150", round, n)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if env.Conflicts() == before {
		t.Fatal("no transaction met another: the test shows nothing")
	}
}
