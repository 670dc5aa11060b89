package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestUploadStatus: an upload's status moves only forward, by conditional
// writes: of deliveries claiming it at once exactly one holds it; none
// claims it under another's live lease; after a lease ends another takes
// it over and the first can no longer finish it; a final status is never
// claimed, finished again or released.
func TestUploadStatus(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now()
	u, err := env.Store.CreateUpload(ctx, scangate.Upload{CreatedBy: 1, CreatedAt: scangate.At(now), ExpiresAt: scangate.At(now.Add(time.Minute)),
		Envelope: scangate.NewScan{VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r", WebhookID: 3, Status: "completed",
			PR: scangate.PRRef{Number: 4, Name: "n", Link: "l"}}}, time.Hour)
	if err != nil || u.ID != 1 || u.Status != scangate.UploadAwaiting {
		t.Fatalf("%+v %v", u, err)
	}
	lease := now.Add(time.Minute).UnixMilli()
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := 0
	for i := range 8 {
		wg.Go(func() {
			_, ok, err := env.Store.ClaimUpload(ctx, u.ID, now, lease+int64(i))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				claimed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if claimed != 1 {
		t.Fatalf("%d deliveries claimed it at once; want 1", claimed)
	}
	got, _ := env.Store.Upload(ctx, u.ID)
	held := got.Lease
	if _, ok, _ := env.Store.ClaimUpload(ctx, u.ID, now, lease+100); ok || got.Status != scangate.UploadProcessing {
		t.Errorf("claimed under a live lease (%+v)", got)
	}
	// The holder's lease ends: another takes it over.
	later := time.UnixMilli(held + 1)
	if _, ok, _ := env.Store.ClaimUpload(ctx, u.ID, later, held+60_000); !ok {
		t.Fatal("no takeover after the lease ended")
	}
	if ok, err := env.Store.FinishUpload(ctx, u, held, scangate.UploadOutcome{ScanIDs: []int64{9}}, later); ok || err != nil {
		t.Errorf("the first holder finished it after losing it: %v %v", ok, err)
	}
	if ok, err := env.Store.FinishUpload(ctx, u, held+60_000, scangate.UploadOutcome{ScanIDs: []int64{5, 6}, Results: 3, Recorded: 2}, later); !ok || err != nil {
		t.Fatalf("the holder could not finish: %v %v", ok, err)
	}
	done, _ := env.Store.Upload(ctx, u.ID)
	if done.Status != scangate.UploadComplete || len(done.ScanIDs) != 2 || done.Recorded != 2 || done.CompletedAt == nil || done.Lease != 0 {
		t.Errorf("finished: %+v", done)
	}
	far := time.UnixMilli(held + 10*60_000)
	if _, ok, _ := env.Store.ClaimUpload(ctx, u.ID, far, far.UnixMilli()); ok {
		t.Error("a complete upload was claimed")
	}
	if ok, _ := env.Store.FinishUpload(ctx, u, 0, scangate.UploadOutcome{Errors: []scangate.Problem{{Status: 400}}}, far); ok {
		t.Error("a complete upload was finished again")
	}
	if ok, _ := env.Store.ReleaseUpload(ctx, u.ID, held+60_000); ok {
		t.Error("a complete upload was released")
	}
	if again, _ := env.Store.Upload(ctx, u.ID); again.Status != scangate.UploadComplete || len(again.Errors) != 0 {
		t.Errorf("the final status changed: %+v", again)
	}
	if _, err := env.Store.Upload(ctx, 99); scangate.KindOf(err) != scangate.KindNotFound {
		t.Errorf("a missing upload: %v", err)
	}
}
