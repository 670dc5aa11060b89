// Package seal encrypts the secrets scangate must keep and use again —
// webhook signing secrets and integration tokens — before they are
// stored: AES-256-GCM under a key derived (HKDF-SHA256) from the
// deployment's secrets key (SECRETS_KEY, kept in AWS Secrets Manager), with
// a fresh random nonce each time and the secret's purpose as additional
// data, so that a sealed value copied into another kind of field does not
// open. The table holds only sealed values; only the functions that create
// or use such a secret are given the key.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
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
	aead cipher.AEAD
}

// New returns a box for the secrets key (at least MinKey random bytes).
func New(secretsKey []byte) (*Box, error) {
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
	return &Box{aead: aead}, nil
}

// Seal encrypts plain for purpose: "v1." and the base64url of the nonce
// and the ciphertext.
func (b *Box) Seal(purpose, plain string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return version + base64.RawURLEncoding.EncodeToString(out), nil
}

// ErrOpen is the error of a value that does not open: another key, another
// purpose, or altered.
var ErrOpen = errors.New("the sealed value does not open with this key and purpose")

// Open decrypts a value sealed for purpose. Its errors never hold the
// value.
func (b *Box) Open(purpose, sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, version)
	if !ok {
		return "", ErrOpen
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", ErrOpen
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// FromEnv builds the box from SECRETS_KEY (base64 of at least MinKey
// bytes), which only the functions that seal or open secrets are given.
func FromEnv(getenv func(string) string) (*Box, error) {
	s := getenv("SECRETS_KEY")
	if s == "" {
		return nil, errors.New("SECRETS_KEY is not set")
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(k) < MinKey {
		return nil, fmt.Errorf("SECRETS_KEY must be base64 of at least %d bytes", MinKey) // never the value
	}
	return New(k)
}
