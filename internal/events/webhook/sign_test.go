package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/scangate"
)

func TestNewSecret(t *testing.T) {
	a, err := webhook.NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := webhook.NewSecret(nil)
	if a == b {
		t.Fatal("two secrets are equal")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("secret %q: not whsec_ and the base64 of 32 bytes (%d bytes, %v)", a, len(key), err)
	}
	det, _ := webhook.NewSecret(bytes.NewReader(make([]byte, 32)))
	if det != "whsec_"+strings.Repeat("A", 43)+"=" {
		t.Fatalf("from 32 zero bytes: %q", det)
	}
	if _, err := webhook.NewSecret(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Fatal("a secret from 31 bytes")
	}
}

func TestCheckSecret(t *testing.T) {
	good, _ := webhook.NewSecret(nil)
	cases := map[string]bool{
		good:                                       true,
		"whsec_" + b64(24):                         true,
		"whsec_" + b64(64):                         true,
		"whsec_" + b64(23):                         false,
		"whsec_" + b64(65):                         false,
		strings.TrimPrefix(good, "whsec_"):         false,
		"whsec_" + strings.Repeat("!", 44):         false,
		"whsec_" + strings.TrimRight(b64(32), "="): false, // unpadded
	}
	for s, want := range cases {
		err := webhook.CheckSecret(s)
		if (err == nil) != want {
			t.Errorf("CheckSecret(%q): %v, want valid %v", s, err, want)
		}
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("CheckSecret's error shows the secret: %v", err)
		}
	}
}

func b64(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }

// The signature is the specification's: the example of its reference
// libraries' tests, and an HMAC computed here from its definition.
func TestSignatureIsTheSpecifications(t *testing.T) {
	s, err := webhook.NewSigner("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1614265330, 0)
	sig, err := s.Signature("msg_p5jXN8AQM9LWM0D4loKWxJek", at, []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; sig != want {
		t.Fatalf("signature %q, want the specification's %q", sig, want)
	}

	secret, _ := webhook.NewSecret(nil)
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	body := []byte(`{"id":"01J","type":"webhook.test","occurred_at":"2026-03-01T12:00:00.000Z","data":{}}`)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("01J.1772366400." + string(body)))
	s, _ = webhook.NewSigner(secret)
	sig, _ = s.Signature("01J", time.Unix(1772366400, 0), body)
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); sig != want {
		t.Fatalf("signature %q, want %q", sig, want)
	}
}

// While a rotated secret is live, both sign: a receiver that knows either
// one verifies the delivery; one that knows neither does not.
func TestTwoSecretsSignTogether(t *testing.T) {
	oldSecret, _ := webhook.NewSecret(nil)
	newSecret, _ := webhook.NewSecret(nil)
	s, err := webhook.NewSigner(newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	body := []byte(`{"id":"01ABC","type":"webhook.test"}`)
	at := time.Now()
	if err := s.Sign(h, "01ABC", at, body); err != nil {
		t.Fatal(err)
	}
	if sigs := strings.Split(h.Get("webhook-signature"), " "); len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1,") || !strings.HasPrefix(sigs[1], "v1,") {
		t.Fatalf("webhook-signature %q: want two v1 signatures", h.Get("webhook-signature"))
	}
	if h.Get("webhook-id") != "01ABC" || h.Get("webhook-timestamp") != strconv.FormatInt(at.Unix(), 10) {
		t.Fatalf("headers %v", h)
	}
	for name, secret := range map[string]string{"old": oldSecret, "new": newSecret} {
		wh, _ := standardwebhooks.NewWebhook(secret)
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("a receiver with only the %s secret: %v", name, err)
		}
	}
	other, _ := webhook.NewSecret(nil)
	wh, _ := standardwebhooks.NewWebhook(other)
	if err := wh.Verify(body, h); err == nil {
		t.Error("a receiver with another secret verified the delivery")
	}
	if _, err := webhook.NewSigner(); err == nil {
		t.Error("a signer without a secret")
	}
	if _, err := webhook.NewSigner(newSecret, oldSecret, other); err == nil {
		t.Error("a signer with three secrets")
	}
}

func TestEventBody(t *testing.T) {
	at, _ := scangate.ParseTime("2026-03-01T12:00:00.5Z")
	e := webhook.Event{ID: "01HZX", Type: scangate.EventGateChanged, OccurredAt: at, Data: json.RawMessage(`{"pr_id":7,"blocked":true}`)}
	b, err := e.Body()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"01HZX","type":"pr.gate_changed","occurred_at":"2026-03-01T12:00:00.500Z","data":{"pr_id":7,"blocked":true}}`
	if string(b) != want {
		t.Fatalf("body\n%s\nwant\n%s", b, want)
	}
	// <, > and & stay as they are: JSON's \u003c escapes would make a scan
	// of 64 KiB of them too large for the event bus (256 KiB an entry).
	b, err = (webhook.Event{ID: "01HZX", Type: scangate.EventScanRecorded, OccurredAt: at, Data: json.RawMessage(`{"other_details":{"x":"<a&b>"}}`)}).Body()
	if err != nil || !strings.Contains(string(b), `{"other_details":{"x":"<a&b>"}}`) {
		t.Fatalf("body %s, %v", b, err)
	}
	if _, err := (webhook.Event{ID: "x", Type: scangate.EventWebhookTest, Data: json.RawMessage(`{`)}).Body(); err == nil {
		t.Fatal("an event whose data is not JSON")
	}
	if _, err := (webhook.Event{Type: scangate.EventWebhookTest, Data: json.RawMessage(`{}`)}).Body(); err == nil {
		t.Fatal("an event without an id")
	}
	if !scangate.KnownEvent("allowlist.expiring") || scangate.KnownEvent("pr.created") {
		t.Fatal("KnownType")
	}
}
