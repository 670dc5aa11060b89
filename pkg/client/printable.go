package client

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable is s as a terminal or a CI log may show it: every character
// that would act rather than show is written as an escape: C0 controls
// (new lines and carriage returns included, so that no text of the service
// starts a line of its own, such as a CI's "::add-mask::" command), DEL,
// C1 controls, the bidirectional controls (U+202E and its kin, which
// reorder what follows), the line and paragraph separators, and bytes
// that are not UTF-8. What the service sends is the recorder's text, so
// the CLI prints it through this; everything else passes unchanged.
func Printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case acts(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// acts tells the characters above ASCII that Printable escapes.
func acts(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || acts(r) {
			return true
		}
		i += size
	}
	return false
}

// PrintableJSON is a JSON document with the characters Printable escapes
// that JSON lets a string hold raw (DEL, C1 controls, bidirectional
// controls, line and paragraph separators) written as \u escapes: the same
// document for a program, and nothing that acts on a terminal. (C0
// controls cannot appear raw in JSON.)
func PrintableJSON(doc []byte) []byte {
	var out []byte
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRune(doc[i:])
		if r == 0x7f || (r != utf8.RuneError && r > 0x7f && acts(r)) {
			if out == nil {
				out = append(make([]byte, 0, len(doc)+16), doc[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, doc[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return doc
	}
	return out
}

// Redact replaces every occurrence of secret in s.
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}
