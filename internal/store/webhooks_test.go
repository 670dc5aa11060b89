package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// TestWebhookLimit: at most scangate.MaxWebhooks subscriptions exist; one
// more is a conflict that writes nothing, and a deletion frees a place.
func TestWebhookLimit(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	who := scangate.Who{RequestID: "test"}
	w := scangate.Webhook{URL: "https://example.com/hook", Events: []string{scangate.EventWebhookTest}, Active: true, Secret: "v1.x"}
	for range scangate.MaxWebhooks {
		if _, err := env.Store.CreateWebhook(ctx, w, who, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.Store.CreateWebhook(ctx, w, who, time.Now()); scangate.KindOf(err) != scangate.KindConflict {
		t.Fatalf("webhook %d: %v, want a conflict", scangate.MaxWebhooks+1, err)
	}
	all, err := env.Store.Webhooks(ctx)
	if err != nil || len(all) != scangate.MaxWebhooks {
		t.Fatalf("%d webhooks, %v", len(all), err)
	}
	if err := env.Store.DeleteWebhook(ctx, all[0].ID, who, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.CreateWebhook(ctx, w, who, time.Now()); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
	if err := env.Store.DeleteWebhook(ctx, all[0].ID, who, time.Now()); scangate.KindOf(err) != scangate.KindNotFound {
		t.Errorf("a second deletion: %v", err)
	}
}

// TestDeliveryIsCreatedOnceAndRecordedOnce: a delivery of one event to
// one destination is created once however often the dispatcher asks; an
// attempt is recorded only over the state it read (two copies of a
// message record one attempt).
func TestDeliveryIsCreatedOnceAndRecordedOnce(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	who := scangate.Who{RequestID: "test"}
	hook := scangate.Webhook{URL: "https://example.com/hook", Events: []string{scangate.EventWebhookTest}, Active: true, Secret: "v1.x"}
	var ids []int64
	for range 2 {
		w, err := env.Store.CreateWebhook(ctx, hook, who, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	to := scangate.Destination{Kind: scangate.DestWebhook, ID: ids[0]}
	d := scangate.Delivery{To: to, EventID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", EventType: scangate.EventWebhookTest,
		Status: scangate.DeliveryPending, CreatedAt: scangate.At(time.Now())}
	if _, created, err := env.Store.CreateDelivery(ctx, d); !created || err != nil {
		t.Fatal(created, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := 0
	for i := range 4 {
		wg.Go(func() {
			next := d
			next.Attempts, next.Status = 1, scangate.DeliveryDelivered
			next.Last = &scangate.Attempt{At: scangate.At(time.Now()), StatusCode: 200 + i}
			ok, err := env.Store.RecordAttempt(ctx, next, 0)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				recorded++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if recorded != 1 {
		t.Fatalf("%d copies recorded the attempt, want 1", recorded)
	}
	again, created, err := env.Store.CreateDelivery(ctx, d)
	if created || err != nil || again.Status != scangate.DeliveryDelivered || again.Attempts != 1 || again.Last == nil {
		t.Fatalf("created again: %v %+v %v", created, again, err)
	}
	// A redelivery starts a new series; an unknown one is not found.
	r, err := env.Store.Redeliver(ctx, ids[0], d.EventID, who, time.Now())
	if err != nil || r.Status != scangate.DeliveryPending || r.Attempts != 0 {
		t.Errorf("redeliver: %+v %v", r, err)
	}
	if _, err := env.Store.Redeliver(ctx, ids[1], d.EventID, who, time.Now()); scangate.KindOf(err) != scangate.KindNotFound {
		t.Errorf("redeliver of another webhook's delivery: %v", err)
	}
	// A deleted subscription's delivery stays, but is no one's to send again.
	if err := env.Store.DeleteWebhook(ctx, ids[0], who, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Redeliver(ctx, ids[0], d.EventID, who, time.Now()); scangate.KindOf(err) != scangate.KindNotFound {
		t.Errorf("redeliver to a deleted webhook: %v", err)
	}
}

// TestStatusClaims: the status of a commit is claimed by one post at a
// time (another gets Busy until the first is released or its lease has
// run out) and never for an older gate once a newer one was claimed; the
// same gate may be claimed again (its retry); commits are apart.
func TestStatusClaims(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Now()
	lease := now.Add(15 * time.Second).UnixMilli()
	claim := func(sha string, seq int64, at time.Time) string {
		t.Helper()
		r, err := env.Store.ClaimStatus(ctx, 1, 5, sha, seq, at, at.Add(15*time.Second).UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		sha  string
		seq  int64
		at   time.Time
		want string
	}{
		{"a", 1, now, store.Claimed},
		{"a", 2, now, store.Busy},                          // 1 is being posted
		{"b", 1, now, store.Claimed},                       // another commit
		{"a", 2, now.Add(16 * time.Second), store.Claimed}, // 1's lease ran out
		{"a", 1, now.Add(40 * time.Second), store.Superseded},
	}
	for i, s := range steps {
		if got := claim(s.sha, s.seq, s.at); got != s.want {
			t.Fatalf("step %d: claim %s#%d: %s, want %s", i, s.sha, s.seq, got, s.want)
		}
	}
	if err := env.Store.ReleaseStatus(ctx, 1, 5, "b", 1, lease); err != nil {
		t.Fatal(err)
	}
	if got := claim("b", 1, now.Add(time.Second)); got != store.Claimed {
		t.Errorf("the same gate after its release: %s", got)
	}
	// At once: one of many claims of a commit holds it.
	var wg sync.WaitGroup
	var mu sync.Mutex
	held := 0
	for i := range 6 {
		wg.Go(func() {
			r, err := env.Store.ClaimStatus(ctx, 1, 5, "c", int64(i+1), now, lease)
			if err != nil {
				t.Error(err)
			}
			if r == store.Claimed {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if held != 1 {
		t.Errorf("%d claims held commit c at once", held)
	}
}
