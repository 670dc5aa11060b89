package commitstatus_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/events/commitstatus"
)

// memClaims keeps claims in memory, with the rule the table's conditional
// write applies (claimed <= seq).
type memClaims struct {
	mu sync.Mutex
	m  map[commitstatus.Key]int64
	// fail makes every claim fail, as a throttled table would.
	fail error
}

func (c *memClaims) Claim(_ context.Context, k commitstatus.Key, seq int64) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return false, c.fail
	}
	if c.m == nil {
		c.m = map[commitstatus.Key]int64{}
	}
	if !commitstatus.Newest(c.m[k], seq) {
		return false, nil
	}
	c.m[k] = seq
	return true, nil
}

func (c *memClaims) Release(context.Context, commitstatus.Key, int64) error { return nil }

// recorder is a Poster that records what it posts.
type recorder struct {
	mu     sync.Mutex
	posted []commitstatus.Status
}

func (r *recorder) Post(_ context.Context, _ commitstatus.Commit, s commitstatus.Status) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posted = append(r.posted, s)
	return nil
}

func TestNewest(t *testing.T) {
	cases := []struct {
		claimed, seq int64
		want         bool
	}{
		{0, 1, true},  // nothing posted yet
		{1, 2, true},  // the next gate
		{1, 5, true},  // a newer one, some skipped
		{3, 3, true},  // a retry or redelivery of the newest
		{3, 2, false}, // an older gate, after a newer one
		{9, 1, false},
	}
	for _, c := range cases {
		if got := commitstatus.Newest(c.claimed, c.seq); got != c.want {
			t.Errorf("Newest(claimed %d, seq %d) = %v, want %v", c.claimed, c.seq, got, c.want)
		}
	}
}

// Deliveries retried out of order: an older gate's status is dropped once
// a newer one was claimed; each commit is ordered on its own.
func TestOrderedDropsAnOlderGate(t *testing.T) {
	rec := &recorder{}
	o := commitstatus.Ordered{Poster: rec, Claims: &memClaims{}}
	k := commitstatus.Key{VcID: 1, RepoID: 5, SHA: "a1"}
	other := commitstatus.Key{VcID: 1, RepoID: 5, SHA: "b2"}
	status := func(seq int64) commitstatus.Status {
		return commitstatus.Status{State: commitstatus.Failure, Description: string(rune('0' + seq))}
	}
	steps := []struct {
		key    commitstatus.Key
		seq    int64
		posted bool
	}{
		{k, 1, true},
		{k, 3, true},
		{k, 2, false}, // retried after 3 was posted
		{k, 1, false}, // redelivered
		{k, 3, true},  // 3's retry
		{other, 1, true},
	}
	for i, s := range steps {
		posted, err := o.Post(context.Background(), s.key, s.seq, status(s.seq))
		if err != nil || posted != s.posted {
			t.Fatalf("step %d (seq %d): posted %v, %v; want %v", i, s.seq, posted, err, s.posted)
		}
	}
	var got string
	for _, p := range rec.posted {
		got += p.Description
	}
	if got != "1331" {
		t.Fatalf("posted sequences %q, want 1331", got)
	}

	if _, err := o.Post(context.Background(), k, 0, status(0)); err == nil {
		t.Fatal("a status of sequence 0")
	}
	throttled := commitstatus.Ordered{Poster: rec, Claims: &memClaims{fail: errors.New("throttled")}}
	if posted, err := throttled.Post(context.Background(), k, 4, status(4)); posted || err == nil {
		t.Fatalf("a failed claim: posted %v, %v", posted, err)
	}
	if len(rec.posted) != 4 {
		t.Fatalf("%d posts, want none after a failed claim", len(rec.posted))
	}
}
