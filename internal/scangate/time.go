package scangate

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"
)

// TimeLayout is the one timestamp format of the API: RFC 3339 in UTC with
// exactly three fractional digits, so one instant is one string everywhere.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is an instant as the API writes it.
type Time struct{ time.Time }

// At converts t to an API time, truncated to the millisecond in UTC.
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// String formats the time in TimeLayout.
func (t Time) String() string { return t.UTC().Format(TimeLayout) }

// MarshalJSON writes the time in TimeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// ParseTime reads a time written in TimeLayout (or any RFC 3339 time).
func ParseTime(s string) (Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Time{}, err
	}
	return At(t), nil
}

// rfc3339 is RFC 3339's date-time (section 5.6): full-date "T" full-time,
// an offset of at most 23:59, a fraction after a dot; T and Z in either
// case. Go's time.Parse, which then checks the calendar and the clock,
// also takes an offset of 24 hours or of 60 minutes and a comma before the
// fraction.
// It is compiled on first use, not at every Lambda's start.
var rfc3339 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`)
})

// ParseRFC3339 reads a time a client sends: RFC 3339 and nothing else.
// A leap second (:60) is refused: Go's times do not hold one.
func ParseRFC3339(s string) (Time, error) {
	if !rfc3339().MatchString(s) {
		return Time{}, errors.New("not an RFC 3339 date-time")
	}
	t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
	if err != nil {
		return Time{}, err
	}
	return At(t), nil
}

// UnmarshalJSON reads a time written by MarshalJSON (or any RFC 3339 time).
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}
