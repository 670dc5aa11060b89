// Package auth holds the credentials of the service: bearer tokens with a
// checksum, their SHA-256 hashes, password hashing with argon2id, and the
// Lambda TOKEN authorizer that turns a bearer token into a caller.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// tokenPrefix marks scangate tokens so that secret scanners can recognise them.
const tokenPrefix = "sgt_"

const (
	secretHexLen   = 64 // 256 bits of randomness
	checksumHexLen = 8  // CRC-32 of everything before it
)

// ErrMalformedToken is returned for a token that cannot be one of ours: wrong
// shape or a checksum that does not match (a mistyped or truncated token).
var ErrMalformedToken = errors.New("malformed token")

// NewToken returns a fresh token for the user: sgt_<user id>_<256 random
// bits in hex><CRC-32 in hex>. The user id lets the authorizer fetch the
// token and its user in one round trip; the hash covers it, so editing it
// only yields an unknown token.
func NewToken(userID int64) (string, error) {
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	body := tokenPrefix + strconv.FormatInt(userID, 10) + "_" + hex.EncodeToString(secret[:])
	return body + fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))), nil
}

// ParseToken checks the shape and checksum of a token without any I/O and
// returns the user id it names.
func ParseToken(token string) (int64, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return 0, ErrMalformedToken
	}
	idPart, tail, ok := strings.Cut(rest, "_")
	if !ok || len(tail) != secretHexLen+checksumHexLen || !isHex(tail) {
		return 0, ErrMalformedToken
	}
	id, err := strconv.ParseInt(idPart, 10, 64)
	if err != nil || id < 1 || strconv.FormatInt(id, 10) != idPart {
		return 0, ErrMalformedToken
	}
	body := token[:len(token)-checksumHexLen]
	if fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) != token[len(body):] {
		return 0, ErrMalformedToken
	}
	return id, nil
}

// HashToken is the only form in which a token is stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// BearerToken extracts the token from an Authorization header value, matching
// the scheme ignoring case. It reports false for anything else.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}
