package scangate

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Path globs are matched by Go's regexp package, whose engine (RE2) takes
// time linear in the path whatever the pattern: a glob matcher that
// backtracks can be made to take exponential time by a short pattern such
// as `{*,**}/` repeated, and every recording of a finding of that name
// would pay it. compileGlob translates a glob into an equivalent regular
// expression; doublestar still checks a glob's syntax when it is stored.
//
// The language: `*` any characters but `/`; `?` one character but `/`;
// `[abc]`, `[a-z]`, `[!a]` or `[^a]` one character of a class (never `/`);
// `{a,b}` one of the alternatives (they may nest); `\` escapes the next
// character; `**` as a whole segment (`**/x`, `a/**/b`, `a/**`) zero or more
// segments, elsewhere (`a**b`) the same as `*`; three stars or more are
// refused (errStarRun: doublestar gives them no meaning of their own, and
// decides `*****` against an empty path unlike `**`), and so is a glob
// that ends in `/` (it names a directory; findings' paths name files). A
// `**` inside braces is
// refused when a glob is stored (errGlobstarInBraces): where it stands for
// whole segments (`{*,**}/x`) its meaning depends on the text after the
// closing brace, which only expanding every alternative (exponential)
// gives.

var (
	errGlobstarInBraces = errors.New("** may not stand inside {...}; write each alternative as a glob of its own")
	errStarRun          = errors.New("*** means nothing of its own: write * or **")
	errTrailingSlash    = errors.New("a glob that ends in / matches no file path: end it with /** to cover a directory")
)

// globCompiler translates one glob.
type globCompiler struct {
	p     string
	i     int
	depth int // braces open
	b     strings.Builder
	err   error
}

// compileGlob returns the regular expression of a glob that doublestar
// accepts, or errGlobstarInBraces.
func compileGlob(glob string) (*regexp.Regexp, error) {
	if strings.HasSuffix(glob, "/") {
		return nil, errTrailingSlash
	}
	c := &globCompiler{p: glob}
	c.b.WriteString(`(?s)^(?:`)
	c.seq()
	c.b.WriteString(`)$`)
	if c.err != nil {
		return nil, c.err
	}
	return regexp.Compile(c.b.String())
}

// seq translates up to the end of the pattern, or inside braces up to
// the `,` or `}` that ends the alternative.
func (c *globCompiler) seq() {
	for c.i < len(c.p) {
		switch ch := c.p[c.i]; {
		case c.depth > 0 && (ch == ',' || ch == '}'):
			return
		case ch == '*':
			c.star()
		case ch == '?':
			c.b.WriteString(`[^/]`)
			c.i++
		case ch == '[':
			c.class()
		case ch == '{':
			c.braces()
		case ch == '/' && c.depth == 0 && c.p[c.i+1:] == "**":
			// a/**: the directory itself, or anything below it.
			c.b.WriteString(`(?:/.*)?`)
			c.i = len(c.p)
		case ch == '\\' && c.i+1 < len(c.p):
			c.i++
			c.literal()
		default:
			c.literal()
		}
	}
}

// literal writes the rune at i as itself.
func (c *globCompiler) literal() {
	_, n := utf8.DecodeRuneInString(c.p[c.i:])
	c.b.WriteString(regexp.QuoteMeta(c.p[c.i : c.i+n]))
	c.i += n
}

// star translates `*`, or `**`: a globstar when it is a whole segment.
func (c *globCompiler) star() {
	if !strings.HasPrefix(c.p[c.i:], "**") {
		c.b.WriteString(`[^/]*`)
		c.i++
		return
	}
	start := c.i
	for c.i < len(c.p) && c.p[c.i] == '*' {
		c.i++
	}
	segment := (start == 0 || c.p[start-1] == '/') && (c.i == len(c.p) || c.p[c.i] == '/')
	switch {
	case c.i-start > 2:
		c.err = errStarRun
	case c.depth > 0:
		c.err = errGlobstarInBraces
	case !segment:
		c.b.WriteString(`[^/]*`)
	case c.i == len(c.p):
		c.b.WriteString(`.*`)
	default: // **/ : zero or more whole segments
		c.b.WriteString(`(?:.*/)?`)
		c.i++
	}
}

// class translates `[...]`: a class of characters, never `/`.
func (c *globCompiler) class() {
	end := strings.IndexByte(c.p[c.i+1:], ']')
	if end < 0 { // doublestar refuses it; match it literally
		c.literal()
		return
	}
	body := c.p[c.i+1 : c.i+1+end]
	c.i += end + 2
	c.b.WriteByte('[')
	if body != "" && (body[0] == '!' || body[0] == '^') {
		c.b.WriteString(`^/`)
		body = body[1:]
	}
	for _, r := range body {
		if r == '-' || r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') || r >= utf8.RuneSelf {
			c.b.WriteRune(r)
		} else {
			c.b.WriteByte('\\')
			c.b.WriteRune(r)
		}
	}
	c.b.WriteByte(']')
}

// braces translates `{a,b,...}` into an alternation.
func (c *globCompiler) braces() {
	c.i++
	c.depth++
	c.b.WriteString(`(?:`)
	for {
		c.seq()
		if c.i >= len(c.p) { // unclosed: doublestar refuses it
			break
		}
		if c.p[c.i] == '}' {
			c.i++
			break
		}
		c.b.WriteByte('|')
		c.i++
	}
	c.b.WriteByte(')')
	c.depth--
}
