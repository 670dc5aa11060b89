package sarif

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// source feeds the decoder a log's bytes as they are decompressed. It
// refuses them as soon as the log grows past its limit or the decoder holds
// one value (or a run of whitespace) larger than its limit, so that neither
// is ever held in memory; it drops a leading byte order mark.
type source struct {
	r        io.Reader
	n        int64 // bytes read, after the byte order mark
	max      int64
	maxValue int64
	pointer  string
	dec      *jsontext.Decoder // set once the decoder exists
	started  bool
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
	return n, err
}
