package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// testWho is who records the tests' scans.
var testWho = scangate.Who{RequestID: "test"}

// TestRecordScanOnce: deliveries of the same work under one key, at once
// and later, record one scan; all answer with it, and no finding of the
// others is left.
func TestRecordScanOnce(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make([]int64, 6)
	fresh := make([]bool, 6)
	for i := range 5 {
		wg.Go(func() {
			scans, _, recorded, err := env.Store.RecordScans(ctx, []scangate.NewScan{vulnScan(1, "CVE-1", "CVE-2")}, testWho, time.Now(), "upload#7")
			if err != nil {
				t.Error(err)
				return
			}
			ids[i], fresh[i] = scans[0].ID, recorded
		})
	}
	wg.Wait()
	scans, _, recorded, err := env.Store.RecordScans(ctx, []scangate.NewScan{vulnScan(1, "CVE-1")}, testWho, time.Now(), "upload#7")
	if err != nil {
		t.Fatal(err)
	}
	sc := scans[0]
	ids[5], fresh[5] = sc.ID, recorded
	n := 0
	for i, id := range ids {
		if id != ids[0] || id == 0 {
			t.Errorf("delivery %d answered scan %d; the first %d", i, id, ids[0])
		}
		if fresh[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d deliveries recorded; want 1", n)
	}
	if sc.VulnerabilityCount != 2 {
		t.Errorf("the scan answered has %d findings counted; want the first delivery's 2", sc.VulnerabilityCount)
	}
	// The deliveries that lost the race deleted the findings they wrote.
	rep, err := env.Store.Check(ctx)
	if err != nil || rep.Scans != 1 || rep.Findings != 2 || rep.Unrecorded != 0 || len(rep.Drift) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}
