// Package seal encrypts the secrets scangate must keep and use again —
// webhook signing secrets and integration tokens — before they are
// stored: AES-256-GCM under a key derived (HKDF-SHA256) from the
// deployment's secrets key (kept in AWS Secrets Manager, read at run time), with
// a fresh random nonce each time and the secret's purpose as additional
// data, so that a sealed value copied into another kind of field does not
// open. The table holds only sealed values; only the functions that create
// or use such a secret are given the key.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The purposes of sealed values: each opens only as what it was sealed as.
const (
	WebhookSecret    = "webhook-secret"
	IntegrationToken = "integration-token"
)

// MinKey is the fewest bytes a secrets key may have.
const MinKey = 32

// version prefixes every sealed value, so that a later format (another
// key, another cipher) can be told apart.
const version = "v1."

// Box seals and opens values with one key.
type Box struct {
	// key, when set, fetches the key at the box's first use (Lazy).
	key func(context.Context) ([]byte, error)

	mu   sync.Mutex
	aead cipher.AEAD
}

// New returns a box for the secrets key (at least MinKey random bytes).
func New(secretsKey []byte) (*Box, error) {
	aead, err := newAEAD(secretsKey)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Lazy returns a box whose key key fetches the first time the box seals
// or opens a value (from Secrets Manager: internal/keys), then keeps; a fetch
// that fails fails that Seal or Open, and is tried again at the next.
func Lazy(key func(context.Context) ([]byte, error)) *Box {
	return &Box{key: key}
}

// FetchTimeout bounds the fetch of a lazy box's key.
const FetchTimeout = 10 * time.Second

// cipher returns the box's AEAD, fetching its key the first time.
func (b *Box) cipher() (cipher.AEAD, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aead != nil {
		return b.aead, nil
	}
	if b.key == nil {
		return nil, errors.New("a box without a key")
	}
	ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
	defer cancel()
	k, err := b.key(ctx)
	if err != nil {
		return nil, fmt.Errorf("the secrets key: %w", err)
	}
	aead, err := newAEAD(k)
	if err != nil {
		return nil, err
	}
	b.aead = aead
	return aead, nil
}

func newAEAD(secretsKey []byte) (cipher.AEAD, error) {
	if len(secretsKey) < MinKey {
		return nil, fmt.Errorf("a secrets key has at least %d bytes", MinKey)
	}
	k, err := hkdf.Key(sha256.New, secretsKey, nil, "scangate sealed secrets v1", 32)
	if err != nil {
		return nil, fmt.Errorf("derive the sealing key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("sealing cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealing cipher: %w", err)
	}
	return aead, nil
}

// Seal encrypts plain for purpose: "v1." and the base64url of the nonce
// and the ciphertext.
func (b *Box) Seal(purpose, plain string) (string, error) {
	aead, err := b.cipher()
	if err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return version + base64.RawURLEncoding.EncodeToString(out), nil
}

// ErrOpen is the error of a value that does not open: another key, another
// purpose, or altered.
var ErrOpen = errors.New("the sealed value does not open with this key and purpose")

// Open decrypts a value sealed for purpose. Its errors never hold the
// value; a lazy box whose key cannot be fetched answers that error, not
// ErrOpen.
func (b *Box) Open(purpose, sealed string) (string, error) {
	aead, err := b.cipher()
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	rest, ok := strings.CutPrefix(sealed, version)
	if !ok {
		return "", ErrOpen
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", ErrOpen
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}
