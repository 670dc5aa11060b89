package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
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

// TestConcurrentAbsentDropsMeetConflicts: two runs of the step that
// retires a scan's other baselines' ABSENT items update the same items at
// once; the conflict DynamoDB answers one of them with has the updates
// (the same either way) sent again rather than failing the work.
func TestConcurrentAbsentDropsMeetConflicts(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	before := env.Conflicts()
	for round := range 10 {
		scan := int64(round + 1)
		if _, err := env.Store.PutAbsentOf(ctx, scan, 7, 150); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = env.Store.DropOtherAbsentOf(ctx, scan, 8) })
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

// TestWalkAbsentReadsTheScansBaseline: a scan keeps the ABSENT items of
// a baseline it no longer has (retired, until their ttl) and those a
// re-classification that did not switch wrote; WalkAbsent (GET
// /pr/{id}/sarif) yields only those of the scan's baseline.
func TestWalkAbsentReadsTheScansBaseline(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	for bl, n := range map[int64]int{7: 3, 8: 2, 9: 4} {
		if _, err := env.Store.PutAbsentOf(ctx, 1, bl, n); err != nil {
			t.Fatal(err)
		}
	}
	sc := scangate.Scan{ID: 1, Type: "container", Class: scangate.Classification{Classified: true, BaselineScanID: 8}}
	var got []scangate.AbsentFinding
	err := env.Store.WalkAbsent(ctx, sc, func(fs []scangate.AbsentFinding) error {
		got = append(got, fs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d absent findings; want the 2 of baseline 8: %+v", len(got), got)
	}
	for i, f := range got {
		if f.BaselineScanID != 8 || f.Index != i {
			t.Errorf("absent finding %d: baseline %d index %d; want baseline 8 index %d", i, f.BaselineScanID, f.Index, i)
		}
	}
}
