package scangate

import "unicode"

// Hidden returns the first control (Unicode Cc) or format (Cf) character of
// s and its position in characters, counted from 1: NUL, escapes, zero-width
// characters, bidi overrides and the like, which make two identifiers look
// alike or one look like another. Identifiers never hold them.
func Hidden(s string) (r rune, at int, ok bool) {
	i := 0
	for _, c := range s {
		i++
		if unicode.In(c, unicode.Cc, unicode.Cf) {
			return c, i, true
		}
	}
	return 0, 0, false
}

// checkHidden adds a problem at ptr when s holds a control or format
// character, and reports whether it did.
func checkHidden(p *Problems, ptr, s string) bool {
	r, at, ok := Hidden(s)
	if ok {
		p.Add(ptr, "must not hold control or format characters (U+%04X at character %d)", r, at)
	}
	return ok
}
