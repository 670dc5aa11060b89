package scangate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hidden returns the first control (Unicode Cc) or format (Cf) character of
// s and its position in characters, counted from 1: NUL, escapes, zero-width
// characters, bidi overrides and the like, which make two identifiers look
// alike or one look like another. Identifiers never hold them.
func Hidden(s string) (r rune, at int, ok bool) { return firstIn(s, unicode.Cc, unicode.Cf) }

// Control returns the first character of s that a terminal, a CI log or a
// bidirectional renderer acts on rather than shows, and its position in
// characters, counted from 1: a control character (Unicode Cc: C0, DEL and
// C1, so ESC, CR, LF, BEL and the rest) or a bidirectional control
// (Unicode's Bidi_Control property: the embeddings and overrides U+202A to
// U+202E, the isolates U+2066 to U+2069, the marks U+200E, U+200F and
// U+061C). Free text (a PR's title, a link, a path) never holds one; other
// format characters (the zero-width joiners of emoji and of Persian, the
// soft hyphen) are text and stay allowed there, unlike in identifiers
// (Hidden).
func Control(s string) (r rune, at int, ok bool) {
	return firstIn(s, unicode.Cc, unicode.Bidi_Control)
}

// firstIn returns the first character of s in one of the tables, and its
// position in characters, counted from 1.
func firstIn(s string, tables ...*unicode.RangeTable) (r rune, at int, ok bool) {
	i := 0
	for _, c := range s {
		i++
		if unicode.In(c, tables...) {
			return c, i, true
		}
	}
	return 0, 0, false
}

// checkHidden adds a problem at ptr when s holds a control or format
// character, and reports whether it did.
func checkHidden(p *Problems, ptr, s string) bool {
	r, at, found := Hidden(s)
	return refuseAt(p, ptr, "control or format characters", r, at, found)
}

// checkControl adds a problem at ptr when s holds a control character
// (Control), and reports whether it did.
func checkControl(p *Problems, ptr, s string) bool {
	r, at, found := Control(s)
	return refuseAt(p, ptr, "control characters", r, at, found)
}

// refuseAt adds the problem of a character r found at character at (when
// found) and reports whether it did.
func refuseAt(p *Problems, ptr, what string, r rune, at int, found bool) bool {
	if found {
		p.Add(ptr, "must not hold %s (U+%04X at character %d)", what, r, at)
	}
	return found
}

// checkRepoName checks a scan's repo_name against the version-control
// system's rules for a repository's full name: on GitHub owner/name (the
// owner of letters, digits, - and _, the name of those and .), on GitLab
// a namespace path and the project (group/subgroup/project, of letters,
// digits, _, - and .); elsewhere one or more segments of any visible
// characters but \ ? # and %. Never an empty segment or a dot segment (.
// or ..), so a name can never be read as a relative path or a query.
func checkRepoName(p *Problems, vcType, name string) {
	const ptr = "/repo_name"
	if n := len([]rune(name)); n < 1 || n > MaxNameLen {
		p.Add(ptr, "must be 1 to %d characters", MaxNameLen)
		return
	}
	if checkHidden(p, ptr, name) {
		return
	}
	segs := strings.Split(name, "/")
	var allowed func(rune) bool
	var shape string
	switch {
	case strings.EqualFold(vcType, "github"):
		shape = "owner/name, of letters, digits, - _ and . (no . in the owner)"
		if len(segs) != 2 || strings.ContainsRune(segs[0], '.') {
			p.Add(ptr, "must be a GitHub repository's full name: %s", shape)
			return
		}
		allowed = vcsChar
	case strings.EqualFold(vcType, "gitlab"):
		shape = "namespace/project (group/subgroup/project), of letters, digits, - _ and ."
		if len(segs) < 2 {
			p.Add(ptr, "must be a GitLab project's full path: %s", shape)
			return
		}
		allowed = vcsChar
	default:
		shape = "segments separated by /, without \\ ? # or %"
		allowed = func(c rune) bool { return !strings.ContainsRune(`\?#%`, c) && !unicode.IsSpace(c) || c == ' ' }
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.IndexFunc(s, func(c rune) bool { return !allowed(c) }) >= 0 {
			p.Add(ptr, "must be a repository's full name: %s; no empty, . or .. segment", shape)
			return
		}
	}
}

// vcsChar reports a character GitHub and GitLab allow in a repository's
// path: ASCII letters and digits, - _ and .
func vcsChar(c rune) bool {
	return c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '-' || c == '_' || c == '.')
}
