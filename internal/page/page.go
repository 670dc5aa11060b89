// Package page holds what every listing shares: the page size a request
// asks for, and cursors. A cursor is opaque and tamper-evident: it carries
// the key a query stopped at and an HMAC-SHA256 of it together with the
// listing that issued it (its name and filters), so it continues that
// listing only; any other cursor, or one altered by a single character,
// is refused.
package page

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
	"strings"
)

// Limits of a page.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// ErrCursor is the error of a cursor that this listing did not issue.
var ErrCursor = errors.New("the cursor was not issued by this listing")

// macLen is how many bytes of the HMAC a cursor carries (128 bits).
const macLen = 16

// Codec seals and opens cursors with one secret key.
type Codec struct{ key []byte }

// NewCodec returns a codec for the key (at least 32 bytes).
func NewCodec(key []byte) (Codec, error) {
	if len(key) < 32 {
		return Codec{}, errors.New("a cursor key needs at least 32 bytes")
	}
	return Codec{key: key}, nil
}

// Listing names a listing and its filters; a cursor issued for one is
// refused by every other.
type Listing struct {
	Name    string
	Filters map[string]string
}

func (l Listing) canonical() string {
	names := make([]string, 0, len(l.Filters))
	for k := range l.Filters {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(l.Name)
	for _, k := range names {
		b.WriteString("\x00" + k + "=" + l.Filters[k])
	}
	return b.String()
}

func (c Codec) mac(l Listing, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(l.canonical()))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:macLen]
}

// Seal makes the cursor that continues listing l after the key (attribute
// name to string value) where its query stopped; none for an empty key.
func (c Codec) Seal(l Listing, key map[string]string) string {
	if len(key) == 0 {
		return ""
	}
	payload, _ := json.Marshal(key) // a map of strings always encodes
	return base64.RawURLEncoding.EncodeToString(append(payload, c.mac(l, payload)...))
}

// Open returns the key a cursor of listing l carries, or ErrCursor.
func (c Codec) Open(l Listing, cursor string) (map[string]string, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) <= macLen {
		return nil, ErrCursor
	}
	payload, sum := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(sum, c.mac(l, payload)) {
		return nil, ErrCursor
	}
	var key map[string]string
	if err := json.Unmarshal(payload, &key); err != nil || len(key) == 0 {
		return nil, ErrCursor
	}
	return key, nil
}
