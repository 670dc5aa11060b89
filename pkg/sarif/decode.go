package sarif

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// maxSkipDepth bounds the nesting of a member this reader skips, so that the
// decoder's stack of open arrays and objects stays small.
const maxSkipDepth = 128

// reader streams one log: the log, its runs and their results are read token
// by token; each result and each rule is decoded on its own.
type reader struct {
	dec  *json.Decoder
	lim  Limits
	ptr  string
	buf  json.RawMessage // the value being decoded, reused
	rep  Report
	seen map[string]int // a finding's identity -> its index in rep.Findings
	per  map[string]int // findings per scan type
}

func read(r io.Reader, o Options) (*Report, error) {
	lim := o.Limits.withDefaults()
	src := &source{r: r, max: lim.Bytes, maxValue: lim.ValueBytes, pointer: o.Pointer}
	dec := json.NewDecoder(src)
	src.dec = dec
	rd := &reader{dec: dec, lim: lim, ptr: o.Pointer, seen: map[string]int{}, per: map[string]int{}}
	if err := rd.log(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, &InputError{Detail: "the SARIF log is followed by more JSON"}
		}
		return nil, rd.fail(err)
	}
	rd.rep.Recorded = len(rd.rep.Findings)
	return &rd.rep, nil
}

// log reads the sarifLog object.
func (r *reader) log() error {
	var version *string
	runs := false
	err := r.object(r.ptr, func(key, ptr string) error {
		switch key {
		case "version":
			var v string
			if err := r.decode(ptr, &v); err != nil {
				return err
			}
			if v != "2.1.0" {
				return errVersion(ptr)
			}
			version = &v
			return nil
		case "runs":
			runs = true
			return r.array(ptr, true, func(i int, ptr string) error {
				if i >= r.lim.Runs {
					return &LimitError{Limit: "runs", Max: int64(r.lim.Runs), Pointer: ptr}
				}
				return r.run(i, ptr)
			})
		}
		return r.skip()
	})
	switch {
	case err != nil:
		return err
	case version == nil:
		return errVersion(r.ptr + "/version")
	case !runs:
		return &SchemaError{Pointer: r.ptr + "/runs", Detail: "is required"}
	}
	return nil
}

func errVersion(ptr string) error {
	return &SchemaError{Pointer: ptr, Detail: `must be "2.1.0": only SARIF 2.1.0 is read`}
}

// run reads one run: its tool, its base URIs and working directories, and
// its results, which are mapped once the whole run is read (SARIF does not
// order the members of an object, and results may come before the tool).
func (r *reader) run(index int, ptr string) error {
	rs := &runState{index: index, ptr: ptr, bases: map[string]artifactLocation{}}
	hasTool := false
	err := r.object(ptr, func(key, ptr string) error {
		switch key {
		case "tool":
			hasTool = true
			return r.tool(rs, ptr)
		case "originalUriBaseIds":
			return r.decode(ptr, &rs.bases)
		case "invocations":
			return r.array(ptr, true, func(_ int, ptr string) error {
				var inv struct {
					WorkingDirectory artifactLocation `json:"workingDirectory"`
				}
				if err := r.decode(ptr, &inv); err != nil {
					return err
				}
				if u := inv.WorkingDirectory.URI; u != "" && len(rs.dirs) < 16 {
					rs.dirs = append(rs.dirs, u)
				}
				return nil
			})
		case "results":
			return r.array(ptr, true, func(i int, ptr string) error {
				if len(rs.results) >= r.lim.ResultsPerRun {
					return &LimitError{Limit: "results_per_run", Max: int64(r.lim.ResultsPerRun), Pointer: ptr}
				}
				if r.rep.Results >= r.lim.Results {
					return &LimitError{Limit: "results", Max: int64(r.lim.Results), Pointer: ptr}
				}
				r.rep.Results++
				p, err := r.result(ptr)
				if err != nil {
					return err
				}
				p.index = i
				rs.results = append(rs.results, p)
				return nil
			})
		}
		return r.skip()
	})
	if err != nil {
		return err
	}
	if !hasTool {
		return &SchemaError{Pointer: ptr + "/tool", Detail: "is required"}
	}
	return r.record(rs)
}

// tool reads tool.driver and tool.extensions.
func (r *reader) tool(rs *runState, ptr string) error {
	hasDriver := false
	err := r.object(ptr, func(key, ptr string) error {
		switch key {
		case "driver":
			hasDriver = true
			return r.component(rs, &rs.driver, ptr)
		case "extensions":
			return r.array(ptr, true, func(i int, ptr string) error {
				if err := r.countRule(rs, ptr); err != nil {
					return err
				}
				rs.extensions = append(rs.extensions, component{})
				return r.component(rs, &rs.extensions[i], ptr)
			})
		}
		return r.skip()
	})
	if err == nil && !hasDriver {
		err = &SchemaError{Pointer: ptr + "/driver", Detail: "is required"}
	}
	return err
}

// component reads a toolComponent: its name, version and rules.
func (r *reader) component(rs *runState, c *component, ptr string) error {
	c.ptr = ptr
	hasName := false
	err := r.object(ptr, func(key, ptr string) error {
		switch key {
		case "name":
			hasName = true
			return r.decode(ptr, &c.name)
		case "version":
			return r.decode(ptr, &c.version)
		case "semanticVersion":
			return r.decode(ptr, &c.semanticVersion)
		case "rules":
			return r.array(ptr, true, func(_ int, ptr string) error {
				if err := r.countRule(rs, ptr); err != nil {
					return err
				}
				var d ruleJSON
				if err := r.decode(ptr, &d); err != nil {
					return err
				}
				if d.ID == nil {
					return &SchemaError{Pointer: ptr + "/id", Detail: "is required"}
				}
				c.rules = append(c.rules, d.descriptor())
				return nil
			})
		}
		return r.skip()
	})
	if err == nil && !hasName {
		err = &SchemaError{Pointer: ptr + "/name", Detail: "is required"}
	}
	return err
}

func (r *reader) countRule(rs *runState, ptr string) error {
	rs.rules++
	if rs.rules > r.lim.RulesPerRun {
		return &LimitError{Limit: "rules_per_run", Max: int64(r.lim.RulesPerRun), Pointer: ptr}
	}
	return nil
}

// object reads an object member by member; fn must read each member's value.
func (r *reader) object(ptr string, fn func(key, ptr string) error) error {
	if err := r.open(ptr, '{', false); err != nil {
		return err
	}
	for r.dec.More() {
		t, err := r.dec.Token()
		if err != nil {
			return r.fail(err)
		}
		key, _ := t.(string)
		if err := fn(key, ptr+"/"+escape(key)); err != nil {
			return err
		}
	}
	return r.close()
}

// array reads an array element by element (null, where allowed, as none).
func (r *reader) array(ptr string, nullable bool, fn func(i int, ptr string) error) error {
	if err := r.open(ptr, '[', nullable); err != nil {
		if err == errNull {
			return nil
		}
		return err
	}
	for i := 0; r.dec.More(); i++ {
		if err := fn(i, ptr+"/"+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return r.close()
}

var errNull = errors.New("null")

func (r *reader) open(ptr string, want json.Delim, nullable bool) error {
	t, err := r.dec.Token()
	if err != nil {
		return r.fail(err)
	}
	if t == nil && nullable {
		return errNull
	}
	if t != want {
		what := map[json.Delim]string{'{': "an object", '[': "an array"}[want]
		return &SchemaError{Pointer: ptr, Detail: "must be " + what}
	}
	return nil
}

func (r *reader) close() error {
	if _, err := r.dec.Token(); err != nil {
		return r.fail(err)
	}
	return nil
}

// skip reads a value that this reader does not need, token by token.
func (r *reader) skip() error {
	depth := 0
	for {
		t, err := r.dec.Token()
		if err != nil {
			return r.fail(err)
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
			if depth > maxSkipDepth {
				return &InputError{Detail: "the SARIF log nests arrays and objects too deeply"}
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// decode decodes the next value into v, reporting a value of the wrong type
// as a SchemaError that points at it.
func (r *reader) decode(ptr string, v any) error {
	if err := r.dec.Decode(&r.buf); err != nil {
		return r.fail(err)
	}
	err := json.Unmarshal(r.buf, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &SchemaError{Pointer: locate(r.buf, ptr, te), Detail: "must be " + typeName(te.Type)}
	}
	if err != nil {
		return &SchemaError{Pointer: ptr, Detail: "cannot be read"}
	}
	return nil
}

// fail turns an error of the decoder into one of this package's errors.
func (r *reader) fail(err error) error {
	var ie *InputError
	var le *LimitError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ie), errors.As(err, &le):
		return err
	case errors.As(err, &se):
		return &InputError{Detail: "the SARIF log is not valid JSON (at byte " + strconv.FormatInt(se.Offset, 10) + ")"}
	case err == io.EOF, err == io.ErrUnexpectedEOF:
		return &InputError{Detail: "the SARIF log ends early"}
	}
	return &InputError{Detail: "the SARIF log cannot be read", Err: err}
}

func itoa(i int) string { return strconv.Itoa(i) }

// escape escapes a member name for a JSON pointer (RFC 6901).
func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// typeName names the JSON type a Go type decodes from.
func typeName(t reflect.Type) string {
	if t == nil {
		return "of another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[secretText](), reflect.TypeFor[present]():
		return "a string"
	case reflect.TypeFor[optInt]():
		return "an integer"
	case reflect.TypeFor[properties]():
		return "an object"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}

// locate finds the pointer of the value a type error is about. The error
// names the members on the way without array indices, so the value is walked
// again to find the first element that holds a value of the kind reported.
func locate(raw []byte, ptr string, te *json.UnmarshalTypeError) string {
	if te.Field == "" {
		return ptr
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return ptr
	}
	names := strings.Split(te.Field, ".")
	if p, ok := walk(v, names, te.Value, ptr); ok {
		return p
	}
	return ptr
}

func walk(v any, names []string, value, ptr string) (string, bool) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if p, ok := walk(e, names, value, ptr+"/"+strconv.Itoa(i)); ok {
				return p, true
			}
		}
		return ptr, len(names) == 0 && value == "array"
	case map[string]any:
		if len(names) > 0 {
			if e, ok := x[names[0]]; ok {
				return walk(e, names[1:], value, ptr+"/"+escape(names[0]))
			}
		} else if value == "object" {
			return ptr, true
		}
		// The error names no map key: try the members of a map in turn.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if p, ok := walk(x[k], names, value, ptr+"/"+escape(k)); ok {
				return p, true
			}
		}
		return "", false
	}
	k := kindOf(v)
	return ptr, len(names) == 0 && (k == value || value == "number" && strings.HasPrefix(k, "number "))
}

// kindOf describes a value as json.UnmarshalTypeError.Value does.
func kindOf(v any) string {
	switch v := v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number " + v.String()
	case float64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}
