package scangate

import (
	"encoding/json"
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
