package seal_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/scangate/scangate/pkg/seal"
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

func TestFromEnv(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	if _, err := seal.FromEnv(func(string) string { return key }); err != nil {
		t.Fatal(err)
	}
	short := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 31))
	for _, v := range []string{"", short, "not base64!"} {
		_, err := seal.FromEnv(func(string) string { return v })
		if err == nil || v != "" && strings.Contains(err.Error(), v) {
			t.Errorf("SECRETS_KEY %q: %v", v, err)
		}
	}
}
