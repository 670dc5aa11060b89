package scangate_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

var plus2 = time.FixedZone("+02:00", 2*60*60)

// TestAtAndString: an API time is the instant truncated to the
// millisecond, written in UTC with exactly three fractional digits.
func TestAtAndString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 9, 0, 0, 120_000_000, time.UTC), "2026-11-22T09:00:00.120Z"},
		{time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), "2026-11-22T09:00:00.000Z"},
		{time.Date(2026, 11, 22, 9, 0, 0, 5_000_000, time.UTC), "2026-11-22T09:00:00.005Z"},
		{time.Date(2026, 11, 22, 9, 0, 0, 120_999_999, time.UTC), "2026-11-22T09:00:00.120Z"}, // truncated, not rounded
		{time.Date(2026, 11, 22, 9, 0, 0, 999_999_999, time.UTC), "2026-11-22T09:00:00.999Z"}, // not carried into the next second
		{time.Date(2026, 11, 22, 9, 0, 0, 999_999, time.UTC), "2026-11-22T09:00:00.000Z"},
		{time.Date(2026, 11, 22, 11, 0, 0, 120_000_000, plus2), "2026-11-22T09:00:00.120Z"}, // in UTC
		{time.Date(2026, 1, 1, 1, 30, 0, 0, plus2), "2025-12-31T23:30:00.000Z"},             // across the year in UTC
		{time.Date(2024, 2, 29, 23, 59, 59, 1_000_000, time.UTC), "2024-02-29T23:59:59.001Z"},
		{time.Time{}, "0001-01-01T00:00:00.000Z"},
	} {
		at := scangate.At(c.in)
		if got := at.String(); got != c.want {
			t.Errorf("At(%v).String() = %q; want %q", c.in, got, c.want)
		}
		if at.Location() != time.UTC {
			t.Errorf("At(%v) is in %v; want UTC", c.in, at.Location())
		}
		if at.Nanosecond()%1_000_000 != 0 || at.After(c.in) || c.in.Sub(at.Time) >= time.Millisecond {
			t.Errorf("At(%v) = %v; want the instant truncated to the millisecond", c.in, at.Time)
		}
	}
	// String writes UTC with three digits also for a Time not made by At.
	raw := scangate.Time{Time: time.Date(2026, 11, 22, 11, 0, 0, 123_456_789, plus2)}
	if got := raw.String(); got != "2026-11-22T09:00:00.123Z" {
		t.Errorf("String of an unconverted time = %q", got)
	}
}

func TestMarshalJSON(t *testing.T) {
	t.Parallel()
	at := scangate.At(time.Date(2026, 11, 22, 11, 0, 0, 120_500_000, plus2))
	b, err := json.Marshal(struct {
		CreatedAt scangate.Time  `json:"created_at"`
		LastScan  *scangate.Time `json:"last_scan"`
	}{at, &at})
	if err != nil || string(b) != `{"created_at":"2026-11-22T09:00:00.120Z","last_scan":"2026-11-22T09:00:00.120Z"}` {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// TestParseTime reads the API's format and any RFC 3339 time, and gives
// back the instant as At would: one string per instant.
func TestParseTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string // want "" : an error
	}{
		{"2026-11-22T09:00:00.120Z", "2026-11-22T09:00:00.120Z"},
		{"2026-11-22T09:00:00Z", "2026-11-22T09:00:00.000Z"},
		{"2026-11-22T09:00:00.1Z", "2026-11-22T09:00:00.100Z"},
		{"2026-11-22T09:00:00.123456789Z", "2026-11-22T09:00:00.123Z"},
		{"2026-11-22T09:00:00.999999Z", "2026-11-22T09:00:00.999Z"},
		{"2026-11-22T11:00:00.120+02:00", "2026-11-22T09:00:00.120Z"},
		{"2026-11-22T04:30:00.120-04:30", "2026-11-22T09:00:00.120Z"},
		{"2026-11-22T09:00:00.120+00:00", "2026-11-22T09:00:00.120Z"},
		{"", ""},
		{"2026-11-22", ""},
		{"2026-11-22 09:00:00Z", ""},
		{"2026-11-22T09:00:00", ""}, // no zone
		{"2026-11-22T09:00:00.120", ""},
		{"2026-11-22T25:00:00Z", ""},
		{"2026-02-30T09:00:00Z", ""},
		{"22/11/2026 09:00", ""},
		{"1795338000", ""},
	} {
		got, err := scangate.ParseTime(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("ParseTime(%q) = %v; want an error", c.in, got)
		case c.want != "" && (err != nil || got.String() != c.want):
			t.Errorf("ParseTime(%q) = %v, %v; want %s", c.in, got, err, c.want)
		case c.want != "" && got.Location() != time.UTC:
			t.Errorf("ParseTime(%q) is in %v; want UTC", c.in, got.Location())
		}
	}
}

// TestOneStringPerInstant: times that are one instant (after truncation to
// the millisecond) have one string, which reads back as that instant; the
// strings of different instants sort as the instants do.
func TestOneStringPerInstant(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 22, 9, 0, 0, 120_000_000, time.UTC)
	same := []time.Time{
		base,
		base.In(plus2),
		base.In(time.FixedZone("-11:00", -11*60*60)),
		base.Add(999_999 * time.Nanosecond),
		base.Add(time.Nanosecond).In(plus2),
	}
	for _, s := range same {
		if got, want := scangate.At(s).String(), scangate.At(base).String(); got != want {
			t.Errorf("At(%v) = %s; the same instant as %s", s, got, want)
		}
		if !scangate.At(s).Equal(scangate.At(base).Time) {
			t.Errorf("At(%v) is not At(%v)", s, base)
		}
	}
	ordered := []time.Time{
		time.Date(999, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 1, 0, 0, 0, plus2), // 2025-12-31T23:00:00 in UTC
		time.Date(2025, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 10_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
	}
	for i := range ordered {
		at := scangate.At(ordered[i])
		back, err := scangate.ParseTime(at.String())
		if err != nil || !back.Equal(at.Time) || back.String() != at.String() {
			t.Errorf("%s read back as %v, %v", at, back, err)
		}
		if i > 0 {
			prev := scangate.At(ordered[i-1])
			if !prev.Before(at.Time) || !(prev.String() < at.String()) {
				t.Errorf("%s and %s: the strings do not sort as the instants", prev, at)
			}
		}
	}
}

// TestParseRFC3339: RFC 3339's date-time (section 5.6) and nothing else:
// Go's parser also takes an offset of +24:00 or 60 minutes and a comma
// before the fraction.
func TestParseRFC3339(t *testing.T) {
	for s, want := range map[string]string{
		"2027-01-31T00:00:00Z":             "2027-01-31T00:00:00.000Z",
		"2027-01-31t10:00:00.5z":           "2027-01-31T10:00:00.500Z",
		"2027-01-31T00:00:00.123456+02:00": "2027-01-30T22:00:00.123Z",
		"2027-01-31T00:00:00-23:59":        "2027-01-31T23:59:00.000Z",
	} {
		got, err := scangate.ParseRFC3339(s)
		if err != nil || got.String() != want {
			t.Errorf("%s: %v %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"2027-01-31T00:00:00+24:00", "2027-01-31T00:00:00+00:60", "2027-01-31T00:00:00,5Z",
		"2027-01-31 00:00:00Z", "2027-01-31T00:00Z", "2027-01-31T00:00:00", "2027-01-31T00:00:00+0100", "2027-02-30T00:00:00Z",
		"2027-01-31T24:00:00Z", "2027-1-31T00:00:00Z", "2027-01-31T00:00:00.Z", " 2027-01-31T00:00:00Z", "２０２７-01-31T00:00:00Z"} {
		if got, err := scangate.ParseRFC3339(s); err == nil {
			t.Errorf("%q: %v; want an error", s, got)
		}
	}
}
