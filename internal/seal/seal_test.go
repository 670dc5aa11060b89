package seal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/seal"
)

func box(t *testing.T, fill byte) *seal.Box {
	t.Helper()
	b, err := seal.New(bytes.Repeat([]byte{fill}, 48))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A sealed value opens with its key and purpose only, holds nothing of
// the plain text, and differs each time (a fresh nonce).
func TestSealOpens(t *testing.T) {
	b, other := box(t, 1), box(t, 2)
	const secret = "whsec_c2NhbmdhdGUgdGVzdCBzZWNyZXQgMDEyMzQ1Njc4OQ=="
	s1, err := b.Seal(seal.WebhookSecret, secret)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := b.Seal(seal.WebhookSecret, secret)
	if s1 == s2 || !strings.HasPrefix(s1, "v1.") {
		t.Errorf("sealed twice: %s %s", s1, s2)
	}
	for _, leak := range []string{secret, strings.TrimPrefix(secret, "whsec_"), "c2NhbmdhdGUg"} {
		if strings.Contains(s1, leak) {
			t.Errorf("the sealed value holds %q", leak)
		}
	}
	if got, err := b.Open(seal.WebhookSecret, s1); err != nil || got != secret {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := b.Open(seal.IntegrationToken, s1); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("opened for another purpose: %v", err)
	}
	if _, err := other.Open(seal.WebhookSecret, s1); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("opened with another key: %v", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s1, "v1."))
	raw[len(raw)-1] ^= 1
	if _, err := b.Open(seal.WebhookSecret, "v1."+base64.RawURLEncoding.EncodeToString(raw)); !errors.Is(err, seal.ErrOpen) {
		t.Errorf("an altered value opened: %v", err)
	}
	for _, bad := range []string{"", "v1.", "v2." + s1[3:], secret, "v1.!!!"} {
		if _, err := b.Open(seal.WebhookSecret, bad); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("%q opened: %v", bad, err)
		}
	}
}

// A lazy box fetches its key at its first Seal or Open, once; a fetch
// that fails fails that call (not as ErrOpen: the value may be fine) and
// is tried again at the next; a key too short is refused.
func TestLazy(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	fetches := 0
	var fail error
	b := seal.Lazy(func(context.Context) ([]byte, error) {
		fetches++
		return key, fail
	})
	if fetches != 0 {
		t.Fatal("fetched when made")
	}
	fail = errors.New("throttled")
	if _, err := b.Seal(seal.WebhookSecret, "whsec_x"); err == nil || errors.Is(err, seal.ErrOpen) || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("a failed fetch: %v", err)
	}
	fail = nil
	sealed, err := b.Seal(seal.WebhookSecret, "whsec_x")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if plain, err := b.Open(seal.WebhookSecret, sealed); err != nil || plain != "whsec_x" {
			t.Fatalf("open: %q %v", plain, err)
		}
	}
	if fetches != 2 {
		t.Fatalf("%d fetches, want 2 (one failed, one kept)", fetches)
	}
	fixed, _ := seal.New(key)
	if plain, err := fixed.Open(seal.WebhookSecret, sealed); err != nil || plain != "whsec_x" {
		t.Fatalf("the same key, not lazy: %q %v", plain, err)
	}
	short := seal.Lazy(func(context.Context) ([]byte, error) { return key[:31], nil })
	if _, err := short.Seal(seal.WebhookSecret, "x"); err == nil {
		t.Fatal("a 31-byte key sealed")
	}
}
