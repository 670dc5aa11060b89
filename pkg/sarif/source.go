package sarif

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// source feeds the decoder the log's bytes as they are decompressed. It
// refuses them as soon as the log grows past its limit or the decoder holds
// one value larger than its limit, so that neither is ever held in memory;
// it also refuses bytes that are not UTF-8 (RFC 8259) and drops a leading
// byte order mark.
type source struct {
	r        io.Reader
	n        int64 // bytes read, after the byte order mark
	max      int64
	maxValue int64
	pointer  string
	dec      *json.Decoder // set once the decoder exists
	started  bool
	tail     [utf8.UTFMax]byte // an incomplete rune at the end of the last read
	ntail    int
}

func (s *source) Read(p []byte) (int, error) {
	room := s.max - s.n + 1 // read at most one byte past each limit
	if s.dec != nil {
		held := s.n - s.dec.InputOffset()
		if held > s.maxValue {
			return 0, &LimitError{Limit: "value_bytes", Max: s.maxValue, Pointer: s.pointer}
		}
		room = min(room, s.maxValue-held+1)
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	// Fill p: the decoder rescans what it holds on each read, so many small
	// reads of a long run of whitespace would cost time quadratic in it.
	n, err := io.ReadFull(s.r, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	if !s.started && n > 0 {
		s.started = true
		if bytes.HasPrefix(p[:n], []byte("\xef\xbb\xbf")) {
			n = copy(p, p[3:n])
		}
	}
	s.n += int64(n)
	if s.n > s.max {
		return 0, &LimitError{Limit: "bytes", Max: s.max, Pointer: s.pointer}
	}
	if !s.valid(p[:n]) || (err == io.EOF && s.ntail > 0) {
		return 0, &InputError{Detail: "the SARIF log is not UTF-8"}
	}
	return n, err
}

// valid reports whether b continues valid UTF-8, keeping an incomplete rune
// at its end for the next read.
func (s *source) valid(b []byte) bool {
	for s.ntail > 0 && len(b) > 0 && !utf8.FullRune(s.tail[:s.ntail]) {
		s.tail[s.ntail] = b[0]
		s.ntail++
		b = b[1:]
	}
	if s.ntail > 0 {
		if !utf8.FullRune(s.tail[:s.ntail]) {
			return true // still incomplete: b is used up
		}
		if !utf8.Valid(s.tail[:s.ntail]) {
			return false
		}
		s.ntail = 0
	}
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	s.ntail = copy(s.tail[:], b[cut:])
	return utf8.Valid(b[:cut])
}
