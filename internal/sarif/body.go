package sarif

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// LogMember is the member of a request body that holds the log.
const LogMember = "sarif"

// maxBodyDepth bounds the nesting of a body's members other than the log
// (the body itself is level 1), as every other body of the API is bounded.
const maxBodyDepth = 32

// Body is what ReadBody returns of a request body besides the log's runs.
type Body struct {
	// Members are the body's members other than the log, as sent (each
	// checked as the whole body is: I-JSON, at most 32 levels deep). A log
	// member that is null is here too, as null.
	Members map[string]json.RawMessage
	// Log is set when the body holds a log member other than null (it is
	// read, or it is the SchemaError at /sarif).
	Log bool
	// Counts are the log's.
	Counts Counts
}

// ReadBody reads the body of POST /pr/scan/sarif: one JSON object whose
// member "sarif" holds a log, as a JSON object or as a string of base64 of
// its gzip (o.Pointer is /sarif). The log is read as Read reads one (its runs handed to h), in
// the one pass over the body that checks the whole body: I-JSON, the other
// members at most 32 levels deep, nothing after the object. Errors point
// into the log below /sarif. On a SchemaError the rest of the body is
// still read and checked, and Body holds every other member, so that the
// caller may report their problems first.
func ReadBody(body []byte, o Options, h Handler) (Body, error) {
	o.Limits = o.Limits.withDefaults()
	dec := jsontext.NewDecoder(bytes.NewBuffer(body))
	d := &decoder{dec: dec, base: 1, noun: "the body"}
	out := Body{Members: map[string]json.RawMessage{}}
	switch k, err := d.peek(); {
	case err != nil && len(bytes.TrimSpace(body)) == 0:
		return out, &InputError{Detail: "the body is empty; send a JSON object"}
	case err != nil:
		return out, err
	case k != '{':
		return out, &InputError{Detail: "the body must be a JSON object"}
	}
	var schemaErr error
	err := d.object(false, func(name []byte) error {
		if string(name) != LogMember {
			return d.member(out.Members, string(name))
		}
		err := d.log(&out, o, h)
		var se *SchemaError
		if errors.As(err, &se) {
			schemaErr = err
			return nil
		}
		return err
	})
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return out, err
	}
	return out, schemaErr
}

// member reads a member other than the log, as sent.
func (d *decoder) member(m map[string]json.RawMessage, name string) error {
	v, err := d.dec.ReadValue()
	if err != nil {
		return d.fail(err)
	}
	if depthOf(v) > maxBodyDepth-1 {
		return &InputError{Detail: "the body nests arrays and objects more than " + strconv.Itoa(maxBodyDepth) + " levels deep"}
	}
	m[name] = bytes.Clone(v)
	return nil
}

// log reads the log member: a log, or a string of base64 of its gzip.
func (d *decoder) log(out *Body, o Options, h Handler) error {
	const ptr = "/" + LogMember
	o.Pointer = ptr
	k, err := d.peek()
	if err != nil {
		return err
	}
	switch k {
	case 'n':
		out.Members[LogMember] = json.RawMessage("null")
		return d.token()
	case '{':
		out.Log = true
		rd := newReader(d, ptr, o, h)
		err := rd.read()
		out.Counts = rd.total
		return err
	case '"':
		out.Log = true
		v, err := d.dec.ReadValue()
		if err != nil {
			return d.fail(err)
		}
		if bytes.IndexByte(v, '\\') >= 0 {
			v, _ = jsontext.AppendUnquote(nil, v)
		} else {
			v = v[1 : len(v)-1]
		}
		out.Counts, err = readBase64Gzip(bytes.NewReader(v), o, h)
		return err
	}
	out.Log = true
	if err := d.skip(); err != nil {
		return err
	}
	return &SchemaError{Pointer: ptr, Detail: "must be a SARIF log: a JSON object, or a string of base64 of its gzip"}
}

// depthOf is the nesting of a JSON value already read whole: 0 for a
// scalar, 1 for [] or {}, and so on.
func depthOf(v []byte) int {
	depth, most, inString := 0, 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}
