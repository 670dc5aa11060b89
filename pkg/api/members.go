package api

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/scangate/scangate/pkg/scangate"
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

// done reports every member that no read asked for.
func (f *fields) done() {
	var unknown []string
	for k := range f.m {
		if !f.known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		f.p.Add(f.pointer(k), "is not a member of this body and is not changed")
	}
}
