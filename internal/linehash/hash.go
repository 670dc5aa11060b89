// Package linehash computes GitHub code scanning's primaryLocationLineHash:
// the fingerprint of a line of a source file that GitHub's upload action
// (github/codeql-action) adds to SARIF results, so that a finding keeps its
// identity when lines above it are inserted or removed.
//
// The algorithm, as GitHub publishes it: the file is read as UTF-8 and
// taken as UTF-16 code units (each maximal invalid UTF-8 subsequence
// becoming U+FFFD, as Node.js reads it); spaces and tabs are skipped; CR
// and CRLF are read as LF. A rolling polynomial hash, base 37 in wrapping
// 64-bit arithmetic, runs over a window of the next 100 characters kept;
// a line's hash is the window's hash once it holds the 100 characters that
// start with the line's first kept character (the end of the file is the
// character 0xFFFF followed by NULs). The hash is written in lower-case
// hexadecimal without leading zeros, followed by ":N" where N counts the
// lines of the file, up to this one, with the same hash.
package linehash

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

const (
	// window is how many kept characters a line's hash covers.
	window = 100
	// base is the rolling hash's multiplier.
	base = 37
	// eof is the character the end of a file adds.
	eof = 0xFFFF
	// replacement is U+FFFD, what an invalid UTF-8 sequence reads as.
	replacement = 0xFFFD
)

// errStop ends a pass once the caller has what it asked for.
var errStop = errors.New("linehash: stop")

// baseToWindow is base**window in wrapping 64-bit arithmetic: the weight
// of the character that leaves the window.
func baseToWindow() uint64 {
	p := uint64(1)
	for range window {
		p *= base
	}
	return p
}

// roller is the state of one pass over a file. Its memory is the window and
// one counter per distinct hash seen, whatever the length of the lines.
type roller struct {
	chars  [window]uint16
	starts [window]int // the line that starts at this slot of the window, 0 for none
	at     int         // the slot the next character goes to
	sum    uint64
	out    uint64 // baseToWindow

	line      int
	lineStart bool
	afterCR   bool
	counts    map[uint64]int
	emit      func(line int, sum uint64, n int) error
	err       error // emit's, which ends the pass

	utf8Need int // continuation bytes still expected
	utf8Seen int
	utf8Rune rune
	utf8Lo   byte
	utf8Hi   byte
}

func newRoller(emit func(line int, sum uint64, n int) error) *roller {
	return &roller{out: baseToWindow(), lineStart: true, counts: map[uint64]int{}, emit: emit,
		utf8Lo: 0x80, utf8Hi: 0xBF}
}

// char takes one UTF-16 code unit of the file.
func (r *roller) char(c uint16) {
	if c == ' ' || c == '\t' || (r.afterCR && c == '\n') {
		r.afterCR = false
		return
	}
	r.afterCR = c == '\r'
	if c == '\r' {
		c = '\n'
	}
	if r.starts[r.at] != 0 {
		r.flushSlot()
	}
	if r.lineStart {
		r.lineStart = false
		r.line++
		r.starts[r.at] = r.line
	}
	r.lineStart = c == '\n'
	r.roll(c)
}

// flushSlot gives the hash of the line that starts at the slot about to be
// overwritten: the window holds its 100 characters.
func (r *roller) flushSlot() {
	line := r.starts[r.at]
	r.starts[r.at] = 0
	if line == 0 || r.err != nil {
		return
	}
	n := r.counts[r.sum] + 1
	r.counts[r.sum] = n
	r.err = r.emit(line, r.sum, n)
}

// roll puts c into the window in place of its oldest character.
func (r *roller) roll(c uint16) {
	old := r.chars[r.at]
	r.chars[r.at] = c
	r.sum = base*r.sum + uint64(c) - r.out*uint64(old)
	if r.at++; r.at == window {
		r.at = 0
	}
}

// end takes the end of the file and gives the hashes of its last lines.
func (r *roller) end() error {
	if r.utf8Need > 0 {
		r.utf8Need = 0
		r.char(replacement)
	}
	r.char(eof)
	for range window {
		r.flushSlot()
		r.roll(0)
	}
	return r.err
}

// codePoint takes one decoded code point as UTF-16 code units.
func (r *roller) codePoint(c rune) {
	if c < 0x10000 {
		r.char(uint16(c))
		return
	}
	c -= 0x10000
	r.char(uint16(0xD800 + c>>10))
	r.char(uint16(0xDC00 + c&0x3FF))
}

// byte decodes UTF-8 as the WHATWG Encoding Standard does (what Node.js
// does when it reads a file as "utf8"): each maximal invalid subsequence is
// one U+FFFD.
func (r *roller) byte(b byte) {
	if r.utf8Need == 0 {
		switch {
		case b < 0x80:
			r.char(uint16(b))
		case b >= 0xC2 && b <= 0xDF:
			r.utf8Need, r.utf8Rune = 1, rune(b&0x1F)
		case b >= 0xE0 && b <= 0xF4:
			r.utf8Need, r.utf8Rune = 2, rune(b&0x0F)
			if b >= 0xF0 {
				r.utf8Need, r.utf8Rune = 3, rune(b&0x07)
			}
			// The second byte's range excludes overlong forms, surrogates
			// and code points past U+10FFFF.
			switch b {
			case 0xE0:
				r.utf8Lo = 0xA0
			case 0xED:
				r.utf8Hi = 0x9F
			case 0xF0:
				r.utf8Lo = 0x90
			case 0xF4:
				r.utf8Hi = 0x8F
			}
		default:
			r.char(replacement)
		}
		return
	}
	if b < r.utf8Lo || b > r.utf8Hi {
		r.utf8Need, r.utf8Seen, r.utf8Rune, r.utf8Lo, r.utf8Hi = 0, 0, 0, 0x80, 0xBF
		r.char(replacement)
		r.byte(b) // the byte starts over
		return
	}
	r.utf8Lo, r.utf8Hi = 0x80, 0xBF
	r.utf8Rune = r.utf8Rune<<6 | rune(b&0x3F)
	r.utf8Seen++
	if r.utf8Seen < r.utf8Need {
		return
	}
	c := r.utf8Rune
	r.utf8Need, r.utf8Seen, r.utf8Rune = 0, 0, 0
	r.codePoint(c)
}

// run reads src to its end, or until emit stops it (at the end of the
// read that gave the line it stopped at).
func (r *roller) run(src io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		for _, b := range buf[:n] {
			if b < 0x80 && r.utf8Need == 0 {
				r.char(uint16(b))
			} else {
				r.byte(b)
			}
		}
		if r.err != nil {
			return r.err
		}
		if err == io.EOF {
			return r.end()
		}
		if err != nil {
			return fmt.Errorf("reading: %w", err)
		}
	}
}

// format writes a line's hash as GitHub does: the hash in hexadecimal, a
// colon, and the count of lines with that hash so far.
func format(sum uint64, n int) string {
	return strconv.FormatUint(sum, 16) + ":" + strconv.Itoa(n)
}

// Each reads src once and calls fn with every line's number (from 1) and
// hash, in order; the line after a final line break counts, as it does for
// GitHub. fn's error stops the pass and is returned.
func Each(src io.Reader, fn func(line int, hash string) error) error {
	return newRoller(func(line int, sum uint64, n int) error {
		return fn(line, format(sum, n))
	}).run(src)
}

// Lines reads src once and gives the hashes of the lines asked for (by
// number, from 1); it stops reading after the last of them. A line past the
// end of the file has no hash.
func Lines(src io.Reader, lines []int) (map[int]string, error) {
	want := slices.Clone(lines)
	slices.Sort(want)
	want = slices.Compact(want)
	for len(want) > 0 && want[0] < 1 {
		want = want[1:]
	}
	got := make(map[int]string, len(want))
	if len(want) == 0 {
		return got, nil
	}
	next := 0 // lines come in order: the next one asked for is want[next]
	err := newRoller(func(line int, sum uint64, n int) error {
		if line < want[next] {
			return nil
		}
		got[line] = format(sum, n)
		if next++; next == len(want) {
			return errStop
		}
		return nil
	}).run(src)
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return got, nil
}
