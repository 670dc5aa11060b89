package store

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// TestULIDString: the audit ids are the ULIDs github.com/oklog/ulid makes
// of the same time and entropy, so that ids written before and after sort
// together: at the edges of time and entropy, and at random.
func TestULIDString(t *testing.T) {
	var ones [10]byte
	for i := range ones {
		ones[i] = 0xff
	}
	cases := []struct {
		at      time.Time
		entropy [10]byte
	}{
		{time.UnixMilli(0), [10]byte{}},
		{time.UnixMilli(1<<48 - 1), ones},
		{time.Date(2026, 11, 24, 23, 59, 59, 999e6, time.UTC), ones},
	}
	for range 1000 {
		var e [10]byte
		_, _ = rand.Read(e[:])
		var ms [2]byte
		_, _ = rand.Read(ms[:])
		cases = append(cases, struct {
			at      time.Time
			entropy [10]byte
		}{time.UnixMilli(int64(ms[0])<<40 | int64(ms[1])<<8 | time.Now().UnixMilli()&0xff), e})
	}
	for _, c := range cases {
		want := ulid.MustNew(ulid.Timestamp(c.at), bytesReader(c.entropy[:])).String()
		if got := ulidString(c.at, c.entropy); got != want {
			t.Fatalf("ulidString(%d ms, %x) = %s; oklog/ulid makes %s", c.at.UnixMilli(), c.entropy, got, want)
		}
	}
}

type bytesReader []byte

func (b bytesReader) Read(p []byte) (int, error) { return copy(p, b), nil }
