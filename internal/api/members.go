package api

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// members are the members of a JSON object, read one by one against a
// schema so that every problem is reported with its JSON pointer.
type members map[string]json.RawMessage

// fields reads the members of one object. Each read marks a member known;
// done reports the members nobody read as unknown.
type fields struct {
	m     members
	base  string // JSON pointer of the object
	p     *scangate.Problems
	known map[string]bool
}

func readFields(m members, base string, p *scangate.Problems) *fields {
	return &fields{m: m, base: base, p: p, known: map[string]bool{}}
}

func (f *fields) pointer(name string) string {
	return f.base + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
}

// raw returns a member's value; present is false when it is absent, or null
// and nullable. A null for a member that is not nullable is a wrong type.
func (f *fields) raw(name string, required, nullable bool, want string) (json.RawMessage, bool) {
	f.known[name] = true
	v, ok := f.m[name]
	isNull := ok && bytes.Equal(v, []byte("null"))
	switch {
	case !ok && required:
		f.p.Add(f.pointer(name), "is required")
		return nil, false
	case !ok, isNull && nullable:
		return nil, false
	case isNull:
		f.p.Add(f.pointer(name), "must be %s, not null", want)
		return nil, false
	}
	return v, true
}

func (f *fields) decode(name string, required, nullable bool, want string, dst any) bool {
	v, ok := f.raw(name, required, nullable, want)
	if !ok {
		return false
	}
	if err := json.Unmarshal(v, dst); err != nil {
		f.p.Add(f.pointer(name), "must be %s", want)
		return false
	}
	return true
}

// str reads a string member.
func (f *fields) str(name string, required bool) (string, bool) {
	var s string
	ok := f.decode(name, required, false, "a string", &s)
	return s, ok
}

// boolean reads a boolean member.
func (f *fields) boolean(name string, required bool) (bool, bool) {
	var b bool
	ok := f.decode(name, required, false, "a boolean", &b)
	return b, ok
}

// integer reads an integer member within int64.
func (f *fields) integer(name string, required bool) (int64, bool) {
	v, ok := f.raw(name, required, false, "an integer")
	if !ok {
		return 0, false
	}
	n, err := parseInteger(v)
	if err != nil {
		f.p.Add(f.pointer(name), "must be an integer between -2^63 and 2^63-1")
		return 0, false
	}
	return n, true
}

// isIntegerLiteral reports whether v is a JSON integer: -?(0|[1-9][0-9]*),
// with no fraction or exponent.
func isIntegerLiteral(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 || v[0] == '0' && len(v) > 1 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseInteger(v json.RawMessage) (int64, error) {
	if !isIntegerLiteral(v) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(string(v), 10, 64)
}

// enum reads a string member that must be one of values.
func (f *fields) enum(name string, required bool, values []string) (string, bool) {
	s, ok := f.str(name, required)
	if !ok {
		return "", false
	}
	for _, v := range values {
		if s == v {
			return s, true
		}
	}
	f.p.Add(f.pointer(name), "must be one of %s", strings.Join(values, ", "))
	return "", false
}

// nullableStr reads a string member that may be null.
func (f *fields) nullableStr(name string) *string {
	var s string
	if !f.decode(name, false, true, "a string or null", &s) {
		return nil
	}
	return &s
}

// object reads a member that must be a JSON object, returning a reader for
// its members, or nil.
func (f *fields) object(name string, required bool) *fields {
	v, ok := f.raw(name, required, false, "an object")
	if !ok {
		return nil
	}
	var m members
	if v[0] != '{' || json.Unmarshal(v, &m) != nil {
		f.p.Add(f.pointer(name), "must be an object")
		return nil
	}
	return readFields(m, f.pointer(name), f.p)
}

// rawObject reads a free-form object member, compacted.
func (f *fields) rawObject(name string) json.RawMessage {
	v, ok := f.raw(name, false, false, "an object")
	if !ok {
		return nil
	}
	var buf bytes.Buffer
	if v[0] != '{' || json.Compact(&buf, v) != nil {
		f.p.Add(f.pointer(name), "must be an object")
		return nil
	}
	return buf.Bytes()
}

// array reads a member that must be a JSON array.
func (f *fields) array(name string, required bool) []json.RawMessage {
	v, ok := f.raw(name, required, false, "an array")
	if !ok {
		return nil
	}
	var a []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &a) != nil {
		f.p.Add(f.pointer(name), "must be an array")
		return nil
	}
	return a
}

// repoRefs reads a member that is an array of repositories
// ([{"vc_id","repo_id"}], as on tokens and trusts): nil when it is absent
// or has more than scangate.MaxTokenRepos (a problem at the array), else
// every element read (the ids' validity is the caller's to check).
func (f *fields) repoRefs(name string, required bool) []scangate.RepoRef {
	arr := f.array(name, required)
	if arr == nil {
		return nil
	}
	if len(arr) > scangate.MaxTokenRepos {
		f.p.Add(f.pointer(name), "must name 1 to %d repositories", scangate.MaxTokenRepos)
		return nil
	}
	out := []scangate.RepoRef{}
	for i, v := range arr {
		if rf := f.element(name, i, v); rf != nil {
			var r scangate.RepoRef
			r.VcID, _ = rf.integer("vc_id", true)
			r.RepoID, _ = rf.integer("repo_id", true)
			rf.done()
			out = append(out, r)
		}
	}
	return out
}

// element reads the i-th element of an array member as an object.
func (f *fields) element(name string, i int, v json.RawMessage) *fields {
	ptr := f.pointer(name) + "/" + strconv.Itoa(i)
	var m members
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &m) != nil {
		f.p.Add(ptr, "must be an object")
		return nil
	}
	return readFields(m, ptr, f.p)
}

// done reports every member that no read asked for, each with the names
// of the members this object takes.
func (f *fields) done() {
	var unknown []string
	for k := range f.m {
		if !f.known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return
	}
	sort.Strings(unknown)
	accepted := make([]string, 0, len(f.known))
	for k := range f.known {
		accepted = append(accepted, k)
	}
	sort.Strings(accepted)
	for _, k := range unknown {
		*f.p = append(*f.p, scangate.FieldError{Pointer: f.pointer(k),
			Detail: "is not a member of this body and is not changed", Accepted: accepted})
	}
}
