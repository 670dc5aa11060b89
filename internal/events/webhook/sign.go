package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The headers of a signed delivery.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// SecretBytes is how many random bytes a new secret holds.
const SecretBytes = 32

// Bounds of the key a secret may hold, as the specification recommends.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
)

// NewSecret returns a new signing secret: whsec_ and the standard base64 of
// 32 bytes read from r (crypto/rand.Reader when r is nil).
func NewSecret(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	key := make([]byte, SecretBytes)
	if _, err := io.ReadFull(r, key); err != nil {
		return "", fmt.Errorf("new webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// CheckSecret refuses a secret that is not whsec_ and the standard base64
// of 24 to 64 bytes. Its error never shows the secret.
func CheckSecret(secret string) error {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return errors.New("a webhook secret starts with " + SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return errors.New("a webhook secret is " + SecretPrefix + " and standard base64")
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return fmt.Errorf("a webhook secret holds %d to %d bytes, not %d", minSecretBytes, maxSecretBytes, len(key))
	}
	return nil
}

// Signer signs deliveries with one secret, or two while a rotated secret is
// still live: the newest first.
type Signer struct {
	keys []*standardwebhooks.Webhook
}

// NewSigner returns a signer for one or two secrets.
func NewSigner(secrets ...string) (*Signer, error) {
	if len(secrets) == 0 || len(secrets) > 2 {
		return nil, fmt.Errorf("a webhook is signed with one or two secrets, not %d", len(secrets))
	}
	s := &Signer{}
	for i, secret := range secrets {
		if err := CheckSecret(secret); err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, fmt.Errorf("secret %d: the Standard Webhooks library refused it", i+1)
		}
		s.keys = append(s.keys, wh)
	}
	return s, nil
}

// Signature is the webhook-signature header of a message: "v1,<base64 of
// HMAC-SHA256 of id.timestamp.body>" for each secret, space-separated.
func (s *Signer) Signature(id string, at time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(s.keys))
	for _, wh := range s.keys {
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", fmt.Errorf("sign %s: %w", id, err)
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Sign sets the three Standard Webhooks headers of a message on h.
func (s *Signer) Sign(h http.Header, id string, at time.Time, body []byte) error {
	sig, err := s.Signature(id, at, body)
	if err != nil {
		return err
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return nil
}
