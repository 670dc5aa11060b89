// Package password hashes and checks passwords with argon2id, and generates
// passwords. It is its own package so that only the programs that hash a
// password (login, create-user, the admin CLI, the local stack) link argon2.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's minimum recommendation (19 MiB, 2 passes,
// 1 lane), about 30 ms per hash on one arm64 Lambda vCPU.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

var b64 = base64.RawStdEncoding

// Hash returns the argon2id hash of password in PHC string format,
// with a fresh random salt.
func Hash(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// DummyHash is verified against when a login names no user, so that an
// unknown username costs the same time as a wrong password. It is the hash
// of no password anyone uses.
const DummyHash = "$argon2id$v=19$m=19456,t=2,p=1$c2NhbmdhdGUtZHVtbXktc2FsdA$1YV9J6nS0Kc8c9kzKMEvJ8P5n2JtqSx6n4m3QnUvx3o"

// Check reports whether password matches the PHC-format hash. An
// empty hash is checked against a dummy hash and never matches.
func Check(hash, password string) (bool, error) {
	if hash == "" {
		_, _ = Check(DummyHash, password)
		return false, nil
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("unsupported password hash format")
	}
	var version int
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("unsupported argon2 version %q", parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil {
		return false, fmt.Errorf("parse argon2 parameters: %w", err)
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("decode salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, fmt.Errorf("decode key: %w", err)
	}
	got := argon2.IDKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// Argon2id is the password scheme of scangate: Hash and Check as methods,
// for the handlers that take them as a dependency.
type Argon2id struct{}

// Hash returns the argon2id hash of password (see Hash).
func (Argon2id) Hash(password string) (string, error) { return Hash(password) }

// Check reports whether password matches hash (see Check).
func (Argon2id) Check(hash, password string) (bool, error) { return Check(hash, password) }

// Generate returns a random password of 24 letters and digits.
func Generate() (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, 24)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b), nil
}
