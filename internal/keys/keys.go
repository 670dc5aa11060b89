// Package keys reads the deployment's keys (the sealing key of webhook
// secrets and integration tokens, the cursor key of listings) from AWS
// Secrets Manager when a function first needs one, and keeps it for the
// function's execution environment. A function's configuration holds only
// the secret's id (its ARN), so whoever may read the configuration does
// not read the key; and a function fetches nothing at init, so no cold
// start pays for a key the invocation may not use. Only the mains of the
// functions that use a key import this package: CursorKey for the
// listings, SecretsKey for the functions that seal or open webhook secrets
// and integration tokens.
package keys

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/seal"
)

// FetchTimeout bounds one read of a key from Secrets Manager, retries
// included.
const FetchTimeout = 5 * time.Second

// Reader reads a secret's SecretString by its id (*Client is one).
type Reader interface {
	SecretString(ctx context.Context, id string) (string, error)
}

// Key is one key: base64 of at least Min bytes, the SecretString of the
// secret ID. Get fetches it the first time and keeps it; a fetch that fails
// is tried again at the next Get.
type Key struct {
	// Name says what the key is in errors (the variable that names it).
	Name   string
	ID     string
	Min    int
	reader func() (Reader, error)

	mu    sync.Mutex
	value []byte
}

// New returns the key of secret id, read through the Reader that reader
// returns when the key is first needed.
func New(name, id string, min int, reader func() (Reader, error)) *Key {
	return &Key{Name: name, ID: id, Min: min, reader: reader}
}

// Get returns the key, fetching it the first time. Its errors never hold
// the key's value.
func (k *Key) Get(ctx context.Context) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.value != nil {
		return k.value, nil
	}
	r, err := k.reader()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	s, err := r.SecretString(ctx, k.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: read the secret %s: %w", k.Name, k.ID, err)
	}
	v, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(v) < k.Min {
		return nil, fmt.Errorf("%s: the secret %s is not base64 of at least %d bytes", k.Name, k.ID, k.Min) // never the value
	}
	k.value = v
	return v, nil
}

// FromEnv returns the key whose secret's id (ARN or name) is in the
// variable name of the environment, read through ClientFromEnv's client,
// built at the first Get.
func FromEnv(getenv func(string) string, name string, min int) (*Key, error) {
	id := getenv(name)
	if id == "" {
		return nil, fmt.Errorf("%s is not set", name)
	}
	var once sync.Once
	var client Reader
	var cerr error
	return New(name, id, min, func() (Reader, error) {
		once.Do(func() { client, cerr = ClientFromEnv(getenv) })
		return client, cerr
	}), nil
}

// CursorKey is the listings' cursor key, for api.NewLazyCursors: the
// secret CURSOR_KEY_ID names. A listing function does not start without
// the variable.
func CursorKey(e boot.Env) func(context.Context) ([]byte, error) {
	k, err := FromEnv(os.Getenv, "CURSOR_KEY_ID", config.MinCursorKey)
	e.Check(err)
	return k.Get
}

// SecretsKey is the key that seals webhook secrets and integration
// tokens, for seal.Lazy: the secret SECRETS_KEY_ID names. A function that
// keeps such secrets does not start without the variable.
func SecretsKey(e boot.Env) func(context.Context) ([]byte, error) {
	k, err := FromEnv(os.Getenv, "SECRETS_KEY_ID", seal.MinKey)
	e.Check(err)
	return k.Get
}
