package page_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/scangate/scangate/internal/page"
)

func codec(t *testing.T, b byte) page.Codec {
	c, err := page.NewCodec(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCursorRoundTrip(t *testing.T) {
	c := codec(t, 1)
	l := page.Listing{Name: "findings", Filters: map[string]string{"scan": "7", "suppressed": "true"}}
	key := map[string]string{"PK": "SCAN#7", "SK": "FINDING#000099"}
	cur := c.Seal(l, key)
	got, err := c.Open(l, cur)
	if err != nil || got["PK"] != "SCAN#7" || got["SK"] != "FINDING#000099" || len(got) != 2 {
		t.Fatalf("Open = %v, %v", got, err)
	}
	if c.Seal(l, nil) != "" {
		t.Error("an empty key made a cursor")
	}
}

func TestCursorIsRefusedElsewhere(t *testing.T) {
	c := codec(t, 1)
	l := page.Listing{Name: "findings", Filters: map[string]string{"scan": "7"}}
	cur := c.Seal(l, map[string]string{"PK": "SCAN#7", "SK": "FINDING#000099"})
	for name, o := range map[string]struct {
		c   page.Codec
		l   page.Listing
		cur string
	}{
		"another listing":   {c, page.Listing{Name: "scans", Filters: l.Filters}, cur},
		"another filter":    {c, page.Listing{Name: "findings", Filters: map[string]string{"scan": "8"}}, cur},
		"an added filter":   {c, page.Listing{Name: "findings", Filters: map[string]string{"scan": "7", "suppressed": "false"}}, cur},
		"another key":       {codec(t, 2), l, cur},
		"empty":             {c, l, ""},
		"not base64":        {c, l, "!!!"},
		"truncated":         {c, l, cur[:len(cur)-1]},
		"a forged key":      {c, l, c.Seal(page.Listing{Name: "users"}, map[string]string{"PK": "USER#1", "SK": "USER"})},
		"one char replaced": {c, l, flip(cur, 3)},
		"last char changed": {c, l, flip(cur, len(cur)-1)},
	} {
		if _, err := o.c.Open(o.l, o.cur); !errors.Is(err, page.ErrCursor) {
			t.Errorf("%s: err %v; want ErrCursor", name, err)
		}
	}
	// Every single-character change of the cursor is refused.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range cur {
		for _, r := range alphabet {
			if byte(r) == cur[i] {
				continue
			}
			changed := cur[:i] + string(r) + cur[i+1:]
			if _, err := c.Open(l, changed); err == nil {
				t.Fatalf("the cursor with character %d changed to %q was accepted", i, r)
			}
		}
	}
}

func flip(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestCodecNeedsAKey(t *testing.T) {
	if _, err := page.NewCodec(make([]byte, 31)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
}
