package sarif

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDepth bounds the nesting of a log: the log is level 1, its runs
// level 2, and so on.
const maxDepth = 128

// decoder reads JSON with a jsontext.Decoder, which checks I-JSON (RFC
// 7493) as it reads: UTF-8, no repeated member names in any object, no
// lone surrogate escapes. Each of its reads turns the decoder's errors into
// this package's; its pointers are the decoder's below prefix.
type decoder struct {
	dec     *jsontext.Decoder
	prefix  string // the pointer of the decoder's top-level value
	base    int    // the decoder's depth outside the log: 1 in a body, else 0
	noun    string // what it reads, in errors: "the SARIF log", "the body"
	scratch []byte // a string with escapes, unquoted
	names   []byte // a member name with escapes, unquoted
}

// here is the pointer of the value read last.
func (d *decoder) here() string { return d.prefix + string(d.dec.StackPointer()) }

// schema is a SchemaError about the value read last.
func (d *decoder) schema(detail string) error { return &SchemaError{Pointer: d.here(), Detail: detail} }

// wrongType skips the next value and reports that it is not of the JSON
// type wanted.
func (d *decoder) wrongType(want string) error {
	if err := d.skip(); err != nil {
		return err
	}
	return d.schema("must be " + want)
}

// peek returns the kind of the next token.
func (d *decoder) peek() (jsontext.Kind, error) {
	if k := d.dec.PeekKind(); k != 0 {
		return k, nil
	}
	_, err := d.dec.ReadToken()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, d.fail(err)
}

// token reads a token: a delimiter or null.
func (d *decoder) token() error {
	if _, err := d.dec.ReadToken(); err != nil {
		return d.fail(err)
	}
	if d.dec.StackDepth()-d.base > maxDepth {
		return &InputError{Detail: d.noun + " nests arrays and objects more than " + strconv.Itoa(maxDepth) + " levels deep"}
	}
	return nil
}

// open reads the start of an object or array (kind) and reports whether
// it did: a null, where nullable, is read as none; any other value is a
// SchemaError that it is not what (an object, an array).
func (d *decoder) open(kind jsontext.Kind, nullable bool, what string) (bool, error) {
	k, err := d.peek()
	switch {
	case err != nil:
		return false, err
	case k == 'n' && nullable:
		return false, d.token()
	case k != kind:
		return false, d.wrongType(what)
	}
	return true, d.token()
}

// object reads an object member by member: fn gets each member's name
// (valid until the next read) and must read its value. A null, where
// nullable, is no object.
func (d *decoder) object(nullable bool, fn func(name []byte) error) error {
	if open, err := d.open('{', nullable, "an object"); !open {
		return err
	}
	for {
		k, err := d.peek()
		if err != nil {
			return err
		}
		if k == '}' {
			return d.token()
		}
		name, err := d.dec.ReadValue()
		if err != nil {
			return d.fail(err)
		}
		if bytes.IndexByte(name, '\\') >= 0 {
			d.names, _ = jsontext.AppendUnquote(d.names[:0], name)
			name = d.names
		} else {
			name = name[1 : len(name)-1]
		}
		if err := fn(name); err != nil {
			return err
		}
	}
}

// array reads an array element by element (null, where nullable, as none);
// fn must read each element.
func (d *decoder) array(nullable bool, fn func(i int) error) error {
	if open, err := d.open('[', nullable, "an array"); !open {
		return err
	}
	for i := 0; ; i++ {
		k, err := d.peek()
		if err != nil {
			return err
		}
		if k == ']' {
			return d.token()
		}
		if err := fn(i); err != nil {
			return err
		}
	}
}

// skip reads a value that this reader does not use.
func (d *decoder) skip() error {
	k, err := d.peek()
	if err != nil {
		return err
	}
	if k != '{' && k != '[' {
		if err := d.dec.SkipValue(); err != nil {
			return d.fail(err)
		}
		return nil
	}
	depth := d.dec.StackDepth()
	for {
		k, err := d.peek()
		if err != nil {
			return err
		}
		if k == '{' || k == '[' || k == '}' || k == ']' {
			if err := d.token(); err != nil {
				return err
			}
		} else if err := d.dec.SkipValue(); err != nil {
			return d.fail(err)
		}
		if d.dec.StackDepth() == depth {
			return nil
		}
	}
}

// text reads a string, unquoted (valid until the next read); a null is
// absent (ok false).
func (d *decoder) text() (s []byte, ok bool, err error) {
	k, err := d.peek()
	switch {
	case err != nil:
		return nil, false, err
	case k == 'n':
		return nil, false, d.token()
	case k != '"':
		return nil, false, d.wrongType("a string")
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, false, d.fail(err)
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], true, nil
	}
	d.scratch, _ = jsontext.AppendUnquote(d.scratch[:0], v)
	return d.scratch, true, nil
}

// str reads a string; a null is "".
func (d *decoder) str() (string, error) {
	b, _, err := d.text()
	return string(b), err
}

// integer reads an integer within int64; a null is absent.
func (d *decoder) integer() (n int64, ok bool, err error) {
	k, err := d.peek()
	switch {
	case err != nil:
		return 0, false, err
	case k == 'n':
		return 0, false, d.token()
	case k != '0':
		return 0, false, d.wrongType("an integer")
	}
	v, err := d.dec.ReadValue()
	if err != nil {
		return 0, false, d.fail(err)
	}
	n, perr := strconv.ParseInt(string(v), 10, 64)
	if perr != nil {
		return 0, false, d.schema("must be an integer")
	}
	return n, true, nil
}

// end checks that nothing but whitespace follows the top-level value.
func (d *decoder) end() error {
	if _, err := d.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return &InputError{Detail: d.noun + " is followed by more JSON"}
		}
		return d.fail(err)
	}
	return nil
}

// fail turns an error of the decoder into one of this package's. Its
// detail never quotes the input: the decoder's own messages do.
func (d *decoder) fail(err error) error {
	var ie *InputError
	var le *LimitError
	var se *jsontext.SyntacticError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return ie // unwrapped from the decoder's read error
	case errors.As(err, &le):
		return le
	case errors.Is(err, io.ErrUnexpectedEOF), err == io.EOF:
		return &InputError{Detail: d.noun + " ends early"}
	case errors.As(err, &se):
		at := strconv.FormatInt(se.ByteOffset, 10)
		switch cause := se.Err.Error(); {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return &InputError{Detail: d.noun + " is not I-JSON (RFC 7493): the member name at " + d.prefix + string(se.JSONPointer) + " appears more than once"}
		case cause == "invalid UTF-8":
			return &InputError{Detail: d.noun + " is not valid UTF-8 (at byte " + at + ")"}
		case strings.HasPrefix(cause, "invalid surrogate pair"):
			return &InputError{Detail: d.noun + " is not I-JSON (RFC 7493): a \\u escape after byte " + at + " is a lone surrogate"}
		}
		return &InputError{Detail: d.noun + " is not valid JSON (at byte " + at + ")"}
	}
	return &InputError{Detail: d.noun + " cannot be read", Err: err}
}

func itoa(i int) string { return strconv.Itoa(i) }

// escape escapes a member name for a JSON pointer (RFC 6901).
func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}
