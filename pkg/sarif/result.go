package sarif

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// resultJSON is the part of a SARIF result this reader uses. Its fields are
// values, not pointers, so that decoding one allocates little; an empty
// string counts as absent.
type resultJSON struct {
	RuleID    string `json:"ruleId"`
	RuleIndex optInt `json:"ruleIndex"`
	Rule      struct {
		ID            string `json:"id"`
		Index         optInt `json:"index"`
		ToolComponent struct {
			Index optInt `json:"index"`
		} `json:"toolComponent"`
	} `json:"rule"`
	Kind          string `json:"kind"`
	BaselineState string `json:"baselineState"`
	Message       struct {
		Text present `json:"text"`
		ID   present `json:"id"`
	} `json:"message"`
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation artifactLocation `json:"artifactLocation"`
			Region           region           `json:"region"`
			ContextRegion    region           `json:"contextRegion"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	Suppressions []struct {
		Kind   string  `json:"kind"`
		Status *string `json:"status"`
	} `json:"suppressions"`
	PartialFingerprints struct {
		Secret string `json:"secret/v1"`
	} `json:"partialFingerprints"`
	Properties properties `json:"properties"`
}

type artifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type region struct {
	StartLine optInt `json:"startLine"`
	Snippet   struct {
		Text secretText `json:"text"`
	} `json:"snippet"`
}

// optInt is an integer that may be absent.
type optInt struct {
	v   int64
	set bool
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: rawKind(b), Type: reflect.TypeFor[int64]()}
	}
	*o = optInt{v: n, set: true}
	return nil
}

// present records that a string is there, without keeping it.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if b[0] != '"' {
		return &json.UnmarshalTypeError{Value: rawKind(b), Type: reflect.TypeFor[string]()}
	}
	*p = true
	return nil
}

// ruleJSON is the part of a reportingDescriptor this reader uses.
type ruleJSON struct {
	ID            *string    `json:"id"`
	Name          *string    `json:"name"`
	DeprecatedIDs []string   `json:"deprecatedIds"`
	Properties    properties `json:"properties"`
}

// descriptor is what a run keeps of one of its rules.
type descriptor struct {
	id         string
	name       string
	deprecated []string
	secret     bool     // tagged secret
	advisories []string // advisory ids in its tags and properties
}

func (d ruleJSON) descriptor() descriptor {
	x := descriptor{id: *d.ID, deprecated: d.DeprecatedIDs, secret: d.Properties.secret, advisories: d.Properties.advisories}
	if d.Name != nil {
		x.name = *d.Name
	}
	return x
}

// pending is what a run keeps of one result until the run is read whole:
// a secret's value only as its hash.
type pending struct {
	index      int
	ruleID     string // ruleId, else rule.id
	ruleIndex  int64  // -1: none
	component  int    // -1: the driver; else tool.extensions[component]
	skipped    bool
	suppressed bool
	uri, base  string
	line       *int64
	value      secretText // the snippet that holds a secret's value
	ggshield   string     // partialFingerprints["secret/v1"]
	secret     bool       // tagged secret in its properties
	advisories []string
}

var (
	kinds          = []string{"pass", "open", "informational", "notApplicable", "review", "fail"}
	baselineStates = []string{"new", "unchanged", "updated", "absent"}
	suppressKinds  = []string{"inSource", "external"}
	statuses       = []string{"accepted", "underReview", "rejected"}
)

// result decodes and checks one result.
func (r *reader) result(ptr string) (pending, error) {
	var res resultJSON
	p := pending{ruleIndex: -1, component: -1}
	if err := r.decode(ptr, &res); err != nil {
		return p, err
	}
	if !res.Message.Text && !res.Message.ID {
		return p, &SchemaError{Pointer: ptr + "/message", Detail: "is required, with text or id"}
	}
	if err := oneOf(ptr, "/kind", res.Kind, kinds); err != nil {
		return p, err
	}
	if err := oneOf(ptr, "/baselineState", res.BaselineState, baselineStates); err != nil {
		return p, err
	}
	p.skipped = res.Kind != "" && res.Kind != "fail" || res.BaselineState == "absent"
	for i, s := range res.Suppressions {
		if err := oneOf(ptr, "/suppressions/"+itoa(i)+"/kind", s.Kind, suppressKinds); err != nil {
			return p, err
		}
		if s.Status != nil {
			if err := oneOf(ptr, "/suppressions/"+itoa(i)+"/status", *s.Status, statuses); err != nil {
				return p, err
			}
		}
		if s.Status == nil || *s.Status == "accepted" {
			p.suppressed = true
		}
	}
	p.ruleID = cmp.Or(res.RuleID, res.Rule.ID)
	if i := res.RuleIndex; i.set {
		if i.v < -1 {
			return p, &SchemaError{Pointer: ptr + "/ruleIndex", Detail: "must be -1 or more"}
		}
		p.ruleIndex = i.v
	}
	if i := res.Rule.Index; i.set {
		if i.v < -1 {
			return p, &SchemaError{Pointer: ptr + "/rule/index", Detail: "must be -1 or more"}
		}
		if p.ruleIndex < 0 {
			p.ruleIndex = i.v
		}
	}
	if tc := res.Rule.ToolComponent.Index; tc.set {
		if tc.v < 0 {
			return p, &SchemaError{Pointer: ptr + "/rule/toolComponent/index", Detail: "must be 0 or more"}
		}
		p.component = int(min(tc.v, 1<<30))
	}
	if len(res.Locations) > 0 {
		pl := &res.Locations[0].PhysicalLocation
		p.uri, p.base = pl.ArtifactLocation.URI, pl.ArtifactLocation.URIBaseID
		if l := pl.Region.StartLine; l.set {
			if l.v < 1 {
				return p, &SchemaError{Pointer: ptr + "/locations/0/physicalLocation/region/startLine", Detail: "must be 1 or more"}
			}
			p.line = &l.v
		}
		p.value = pl.Region.Snippet.Text
		if !p.value.set {
			p.value = pl.ContextRegion.Snippet.Text
		}
	}
	p.ggshield = res.PartialFingerprints.Secret
	p.secret = res.Properties.secret
	p.advisories = res.Properties.advisories
	return p, nil
}

// oneOf checks an enumerated member, absent or empty being allowed.
func oneOf(ptr, member, v string, allowed []string) error {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	return &SchemaError{Pointer: ptr + member, Detail: "must be one of " + strings.Join(allowed, ", ")}
}

// secretText is a snippet's text, kept only as its SHA-256: the value is
// hashed as it is decoded and never stored.
type secretText struct {
	set      bool // a non-empty string
	redacted bool // REDACTED, ending in ... or masked with ***
	sum      [sha256.Size]byte
}

func (s *secretText) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if b[0] != '"' {
		return &json.UnmarshalTypeError{Value: rawKind(b), Type: reflect.TypeFor[string]()}
	}
	raw := b[1 : len(b)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		s.hash(raw)
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.hash([]byte(v))
	return nil
}

func (s *secretText) hash(v []byte) {
	if len(v) == 0 {
		return
	}
	s.set = true
	s.redacted = bytes.Contains(v, []byte("REDACTED")) || bytes.HasSuffix(v, []byte("...")) ||
		bytes.HasSuffix(v, []byte("…")) || bytes.Contains(v, []byte("***"))
	s.sum = sha256.Sum256(v)
}

// properties is a property bag, read for a secret tag and advisory ids.
type properties struct {
	secret     bool
	advisories []string
}

// UnmarshalJSON reads the bag's tags, and advisory ids in its tags and then
// in any other member whose value is a string or an array of strings, in the
// order of their names.
func (p *properties) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if b[0] != '{' {
		return &json.UnmarshalTypeError{Value: rawKind(b), Type: reflect.TypeFor[properties]()}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if v := m["tags"]; v != nil { // null, as any null member, is absent
		tags, ok := stringsOf(v)
		if a, isArray := v.([]any); !ok || !isArray {
			return &json.UnmarshalTypeError{Value: wrongTag(v, a), Type: reflect.TypeFor[[]string](), Field: "tags"}
		}
		for _, tag := range tags {
			p.secret = p.secret || strings.EqualFold(tag, "secret")
		}
		p.collect(tags)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if values, ok := stringsOf(m[k]); ok && k != "tags" {
			p.collect(values)
		}
	}
	return nil
}

func (p *properties) collect(values []string) {
	for _, s := range values {
		if isAdvisory(s) {
			p.advisories = append(p.advisories, s)
		}
	}
}

// wrongTag describes what makes tags not an array of strings, as
// json.UnmarshalTypeError.Value does.
func wrongTag(v any, a []any) string {
	for _, e := range a {
		if _, ok := e.(string); !ok {
			v = e
			break
		}
	}
	return kindOf(v)
}

// stringsOf returns a string, or an array of strings, as a slice.
func stringsOf(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// advisory matches the ids of the advisory databases docs/API.md names.
// It is compiled on first use, not at the start of every Lambda.
var advisory = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}|GO-\d{4}-\d{4,}|PYSEC-\d{4}-\d+|RUSTSEC-\d{4}-\d{4,}|OSV-\d{4}-\d+)$`)
})

func isAdvisory(s string) bool { return len(s) <= 64 && advisory().MatchString(s) }

// rawKind describes a raw JSON value as json.UnmarshalTypeError.Value does.
func rawKind(b []byte) string {
	switch b[0] {
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number " + string(b)
}
