package localstack_test

import (
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// probe is the name of a member and of a query parameter that no route
// takes: the server's refusal of it lists the names it takes there.
const probe = "zz_probe"

// TestOpenAPIMatchesServer: for every operation of docs/openapi.yaml, the
// members of its body (at every level the document describes) and its
// query parameters are exactly those the server accepts, both ways: a
// name the document allows is not refused as unknown, and a name the
// server takes is allowed by the document. It knows no route: it reads
// them from the document (whose routes equal template.yaml's, a test of
// internal/localstack/gateway), and learns what the server takes from the server itself,
// which refuses an unknown name with the names it accepts at that place
// (errors[].accepted). Each request sends every name the document allows,
// plus the probe; it is refused (422), so it changes nothing, and path ids
// name no record.
func TestOpenAPIMatchesServer(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, api, dir := startStack(t, 0)
	base := strings.TrimSuffix(api, "/api")
	password := adminPassword(t, dir)
	paths := doc.Paths.Map()
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range paths {
			if !yield(p) {
				return
			}
		}
	}) {
		item := paths[path]
		for method, op := range item.Operations() {
			t.Run(method+" "+path, func(t *testing.T) {
				// A fresh token for each operation: a probe of log out
				// revokes the token it carries.
				token := ""
				if op.Security == nil || len(*op.Security) > 0 {
					token = loginToken(t, api, "admin", password)
				}
				checkOperation(t, base, method, path, append(item.Parameters, op.Parameters...), op, token)
			})
		}
	}
}

// maxID is a valid path id that names no record.
var maxID = "9223372036854775807"

func checkOperation(t *testing.T, base, method, path string, params openapi3.Parameters, op *openapi3.Operation, token string) {
	t.Helper()
	query := url.Values{}
	var documented []string
	for _, p := range params {
		if p.Value.In == openapi3.ParameterInQuery {
			documented = append(documented, p.Value.Name)
			query.Set(p.Value.Name, queryValue(p.Value.Schema.Value))
		}
	}
	query.Set(probe, "1")
	objects := map[string]objectDoc{}
	var body any = map[string]any{probe: 0}
	if op.RequestBody != nil {
		mt := op.RequestBody.Value.Content.Get("application/json")
		if mt == nil {
			t.Fatalf("the request body is not application/json")
		}
		body = sample(mt.Schema, "", objects)
	}
	b, _ := json.Marshal(body)
	target := base + regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, maxID) + "?" + query.Encode()
	resp, got := do(t, strings.ToUpper(method), target, token, string(b))
	var problem struct {
		Errors []struct {
			Pointer   string   `json:"pointer"`
			Parameter string   `json:"parameter"`
			Accepted  []string `json:"accepted"`
		} `json:"errors"`
	}
	_ = json.Unmarshal([]byte(got), &problem)
	taken := map[string][]string{} // a body's pointer, or "?": the names the server takes there
	for _, e := range problem.Errors {
		switch {
		case e.Parameter == probe:
			taken["?"] = e.Accepted
		case strings.HasSuffix(e.Pointer, "/"+probe):
			taken[strings.TrimSuffix(e.Pointer, "/"+probe)] = e.Accepted
		}
	}

	// The query string.
	if accepted, ok := taken["?"]; ok {
		compare(t, "the query string", documented, accepted)
	} else if len(documented) > 0 {
		t.Errorf("the document lists the query parameters %v; the server takes none (it did not refuse %s: %d %s)", documented, probe, resp.StatusCode, got)
	}

	// The body, at every level.
	for ptr, accepted := range taken {
		if ptr == "?" {
			continue
		}
		o, ok := objects[ptr]
		switch {
		case !ok && op.RequestBody == nil:
			t.Errorf("the server takes a body with the members %v; the document describes none", accepted)
		case !ok:
			t.Errorf("the server takes an object at %q with the members %v; the document describes none there", ptr, accepted)
		case !o.closed:
			t.Errorf("the document allows any member at %q; the server accepts only %v", ptr, accepted)
		default:
			compare(t, "the body at "+quotePointer(ptr), o.members, accepted)
		}
	}
	for ptr, o := range objects {
		if _, ok := taken[ptr]; !ok && o.closed {
			t.Errorf("the document allows only %v at %q; the server accepted %s there too: %d %s", o.members, ptr, probe, resp.StatusCode, got)
		}
	}
}

func quotePointer(ptr string) string {
	if ptr == "" {
		return `""`
	}
	return ptr
}

// compare reports the names one side allows and the other does not.
func compare(t *testing.T, where string, documented, accepted []string) {
	t.Helper()
	for _, n := range documented {
		if !slices.Contains(accepted, n) {
			t.Errorf("%s: the document allows %q; the server refuses it as unknown (it takes %v)", where, n, accepted)
		}
	}
	for _, n := range accepted {
		if !slices.Contains(documented, n) {
			t.Errorf("%s: the server accepts %q; the document does not allow it (it allows %v)", where, n, documented)
		}
	}
}

// objectDoc is what the document says of an object of a request body: the
// members it describes, and whether it allows no others.
type objectDoc struct {
	members []string
	closed  bool
}

// sample is a value of a schema: an object holds every member the
// document describes and the probe, recorded in objects by pointer; an
// array holds one element when its elements are objects.
func sample(ref *openapi3.SchemaRef, ptr string, objects map[string]objectDoc) any {
	s := pick(ref.Value)
	props, closed := members(s)
	typ := firstType(s)
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case typ == "object" || len(props) > 0:
		o := objectDoc{closed: closed}
		v := map[string]any{probe: 0}
		for _, name := range slices.Sorted(mapsKeys(props)) {
			o.members = append(o.members, name)
			v[name] = sample(props[name], ptr+"/"+name, objects)
		}
		objects[ptr] = o
		return v
	case typ == "array":
		if s.Items != nil {
			if it := pick(s.Items.Value); firstType(it) == "object" || len(it.Properties) > 0 || len(it.AllOf) > 0 {
				return []any{sample(s.Items, ptr+"/0", objects)}
			}
		}
		return []any{}
	}
	return scalar(s)
}

// pick is the alternative of a oneOf or anyOf to sample: an object's when
// there is one (so that its members are checked too), else the first that
// is not null.
func pick(s *openapi3.Schema) *openapi3.Schema {
	alts := append(append(openapi3.SchemaRefs{}, s.OneOf...), s.AnyOf...)
	if len(alts) == 0 {
		return s
	}
	for _, a := range alts {
		if firstType(a.Value) == "object" {
			return a.Value
		}
	}
	for _, a := range alts {
		if firstType(a.Value) != "null" {
			return a.Value
		}
	}
	return alts[0].Value
}

// members are the properties of an object schema and of each schema of
// its allOf, and whether any of them allows no others.
func members(s *openapi3.Schema) (map[string]*openapi3.SchemaRef, bool) {
	props := map[string]*openapi3.SchemaRef{}
	closed := isFalse(s.AdditionalProperties.Has) || isFalse(s.UnevaluatedProperties.Has)
	for _, part := range s.AllOf {
		p, c := members(part.Value)
		for k, v := range p {
			if _, ok := props[k]; !ok {
				props[k] = v
			}
		}
		closed = closed || c
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	return props, closed
}

func isFalse(b *bool) bool { return b != nil && !*b }

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// firstType is a schema's first type other than null ("" when it names
// none; "null" when null is its only type).
func firstType(s *openapi3.Schema) string {
	types := s.Type.Slice()
	for _, ty := range types {
		if ty != openapi3.TypeNull {
			return ty
		}
	}
	if len(types) > 0 {
		return openapi3.TypeNull
	}
	for _, part := range s.AllOf {
		if ty := firstType(part.Value); ty != "" {
			return ty
		}
	}
	return ""
}

// scalar is a value of a schema of a string, number, boolean or null.
func scalar(s *openapi3.Schema) any {
	switch firstType(s) {
	case "integer", "number":
		if s.Min != nil && *s.Min > 0 && *s.Min < math.MaxInt32 {
			return int64(*s.Min)
		}
		return 1
	case "boolean":
		return true
	case "null":
		return nil
	case "string":
		if s.Format == "date-time" {
			return time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		}
		return strings.Repeat("x", max(1, int(s.MinLength)))
	}
	return "x"
}

// queryValue is a value of a query parameter's schema.
func queryValue(s *openapi3.Schema) string {
	v := scalar(pick(s))
	if len(s.Enum) > 0 {
		v = s.Enum[0]
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}
