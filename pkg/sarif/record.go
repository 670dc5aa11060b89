package sarif

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scangate/scangate/pkg/scangate"
)

// Bounds of a recorded finding (docs/API.md, Record a scan).
const (
	maxName    = 256  // a finding's name, an alias, a rule
	maxPath    = 2048 // a finding's path
	maxAliases = 20
)

// secretScanners are the tools whose every result is a secret.
var secretScanners = map[string]bool{"gitleaks": true, "ggshield": true, "detect-secrets": true, "trufflehog": true}

// component is what a run keeps of a toolComponent.
type component struct {
	ptr                            string
	name, version, semanticVersion string
	rules                          []descriptor
	byID                           map[string]int
}

func (c *component) find(id string) *descriptor {
	if c.byID == nil {
		c.byID = make(map[string]int, len(c.rules))
		for i := len(c.rules) - 1; i >= 0; i-- {
			c.byID[c.rules[i].id] = i
		}
	}
	if i, ok := c.byID[id]; ok {
		return &c.rules[i]
	}
	return nil
}

// runState is one run being read.
type runState struct {
	index      int
	ptr        string
	driver     component
	extensions []component
	rules      int
	bases      map[string]artifactLocation // originalUriBaseIds
	dirs       []string                    // invocations' working directories
	results    []pending
}

// descriptor finds the rule of a result: by index in its tool component,
// else by id in the driver and the extensions (a hierarchical id "a/b" falls
// back to "a"). It is nil when the log describes no such rule.
func (rs *runState) descriptor(p *pending) *descriptor {
	comps := []*component{&rs.driver}
	for i := range rs.extensions {
		comps = append(comps, &rs.extensions[i])
	}
	if p.component >= 0 {
		if p.component >= len(rs.extensions) {
			return nil
		}
		comps = comps[1+p.component : 2+p.component]
	}
	if p.ruleIndex >= 0 {
		if p.ruleIndex < int64(len(comps[0].rules)) {
			return &comps[0].rules[p.ruleIndex]
		}
		return nil
	}
	for id := p.ruleID; id != ""; {
		for _, c := range comps {
			if d := c.find(id); d != nil {
				return d
			}
		}
		i := strings.LastIndexByte(id, '/')
		if i < 0 {
			break
		}
		id = id[:i]
	}
	return nil
}

// record maps a run's results to findings once the run is read.
func (r *reader) record(rs *runState) error {
	name := rs.driver.name
	secretTool := secretScanners[strings.ToLower(name)]
	trivy := strings.EqualFold(name, "trivy")
	var types []scangate.ScanType
	for i := range rs.results {
		p := &rs.results[i]
		if p.skipped {
			r.rep.Skipped++
			continue
		}
		ptr := rs.ptr + "/results/" + itoa(p.index)
		d := rs.descriptor(p)
		rule := p.ruleID
		if rule == "" && d != nil {
			rule = d.id
		}
		f := Finding{Type: scangate.ScanVulnerability, Rule: rule, Line: p.line, SuppressedInSource: p.suppressed}
		f.Path = rs.repoPath(p.uri, p.base)
		if p.secret || secretTool || d != nil && (d.secret || trivy && d.name == "Secret") {
			f.Type = scangate.ScanSecret
			f.Name = secretName(p, rule, f.Path)
		} else {
			f.Name, f.Aliases = advisoryName(rule, d, p)
		}
		if err := check(f, ptr); err != nil {
			return err
		}
		if err := r.add(f, ptr); err != nil {
			return err
		}
		if !slices.Contains(types, f.Type) {
			types = append(types, f.Type)
		}
	}
	r.addTool(name, cmp.Or(rs.driver.version, rs.driver.semanticVersion), types)
	rs.results = nil
	return nil
}

// secretName is sha256: of the secret's value unless the scanner redacted
// it, else ggshield's fingerprint of it, else the identity of its location.
func secretName(p *pending, rule, path string) string {
	if p.value.set && !p.value.redacted {
		return "sha256:" + hex.EncodeToString(p.value.sum[:])
	}
	if isHex(p.ggshield, 128) {
		return "ggshield:" + strings.ToLower(p.ggshield)
	}
	line := ""
	if p.line != nil {
		line = strconv.FormatInt(*p.line, 10)
	}
	sum := sha256.Sum256([]byte(rule + "|" + path + "|" + line))
	return "loc:" + hex.EncodeToString(sum[:])
}

// isHex reports 1 to most hex digits. (Here and below, byte loops rather
// than regular expressions: a package variable's regexp is compiled at the
// start of every Lambda, and every function links this package.)
func isHex(s string, most int) bool {
	if s == "" || len(s) > most {
		return false
	}
	for i := range len(s) {
		if c := s[i] | 0x20; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// advisoryName is the advisory id among the rule id and its aliases (its
// deprecatedIds, advisory ids in its tags and properties and in the
// result's), the others being aliases; else the rule id.
func advisoryName(rule string, d *descriptor, p *pending) (string, []string) {
	var others []string
	if d != nil {
		others = append(append(others, d.deprecated...), d.advisories...)
	}
	others = append(others, p.advisories...)
	name := rule
	if !isAdvisory(rule) {
		for _, o := range others {
			if isAdvisory(o) {
				name = o
				break
			}
		}
	}
	var aliases []string
	for _, o := range others {
		if o != "" && !strings.EqualFold(o, name) && !containsFold(aliases, o) {
			aliases = append(aliases, o)
		}
	}
	return name, aliases
}

// check applies the bounds of a recorded finding.
func check(f Finding, ptr string) error {
	switch {
	case f.Name == "":
		return &SchemaError{Pointer: ptr + "/ruleId", Detail: "is required to record a vulnerability: no ruleId, rule.id or rule of the tool names it"}
	case utf8.RuneCountInString(f.Name) > maxName || utf8.RuneCountInString(f.Rule) > maxName:
		return &SchemaError{Pointer: ptr + "/ruleId", Detail: "must be at most 256 characters: it names the finding"}
	case utf8.RuneCountInString(f.Path) > maxPath:
		return &SchemaError{Pointer: ptr + "/locations/0/physicalLocation/artifactLocation/uri", Detail: "must be at most 2048 characters"}
	case len(f.Aliases) > maxAliases:
		return &SchemaError{Pointer: ptr, Detail: "has more than 20 aliases (its rule's deprecatedIds and the advisory ids in tags and properties)"}
	case controls(f.Name):
		return &SchemaError{Pointer: ptr + "/ruleId", Detail: "must not hold control or format characters: it names the finding"}
	}
	for _, a := range f.Aliases {
		if utf8.RuneCountInString(a) > maxName || controls(a) {
			return &SchemaError{Pointer: ptr, Detail: "has an alias (a deprecatedId of its rule) longer than 256 characters or holding control or format characters"}
		}
	}
	return nil
}

func controls(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf) })
}

// add records a finding once per type, name, path and line.
func (r *reader) add(f Finding, ptr string) error {
	name := f.Name
	if f.Type == scangate.ScanVulnerability {
		name = strings.ToUpper(name)
	}
	line := ""
	if f.Line != nil {
		line = strconv.FormatInt(*f.Line, 10)
	}
	key := string(f.Type) + "\x00" + name + "\x00" + f.Path + "\x00" + line
	if i, ok := r.seen[key]; ok {
		r.rep.Duplicates++
		g := &r.rep.Findings[i]
		if g.SuppressedInSource && !f.SuppressedInSource {
			g.SuppressedInSource = false
			r.rep.SuppressedInSource--
		}
		for _, a := range f.Aliases {
			if !containsFold(g.Aliases, a) && !strings.EqualFold(a, g.Name) {
				g.Aliases = append(g.Aliases, a)
			}
		}
		if len(g.Aliases) > maxAliases {
			return &SchemaError{Pointer: ptr, Detail: "has more than 20 aliases, with those of the results recorded as the same finding"}
		}
		return nil
	}
	if r.per[string(f.Type)] >= r.lim.FindingsPerType {
		return &LimitError{Limit: "findings_per_type", Max: int64(r.lim.FindingsPerType), Pointer: ptr}
	}
	r.per[string(f.Type)]++
	r.seen[key] = len(r.rep.Findings)
	r.rep.Findings = append(r.rep.Findings, f)
	if f.SuppressedInSource {
		r.rep.SuppressedInSource++
	}
	return nil
}

func (r *reader) addTool(name, version string, types []scangate.ScanType) {
	for i := range r.rep.Tools {
		t := &r.rep.Tools[i]
		if t.Name == name && t.Version == version {
			for _, x := range types {
				if !slices.Contains(t.Types, x) {
					t.Types = append(t.Types, x)
				}
			}
			sortTypes(t.Types)
			return
		}
	}
	sortTypes(types)
	r.rep.Tools = append(r.rep.Tools, Tool{Name: name, Version: version, Types: types})
}

func sortTypes(t []scangate.ScanType) {
	if len(t) == 2 && t[0] != scangate.ScanSecret {
		t[0], t[1] = t[1], t[0]
	}
}

// repoPath makes a location's URI repository-relative: a relative URI is
// resolved through originalUriBaseIds up to the first absolute base (the
// checkout root) or a base the log does not define; an absolute URI loses
// file:// and the longest checkout root the log names (an absolute base or
// an invocation's working directory) that it starts with.
func (rs *runState) repoPath(uri, base string) string {
	if uri == "" {
		return ""
	}
	rel := uri
	if !absolute(rel) {
		for depth := 0; base != "" && depth < 8; depth++ {
			b, ok := rs.bases[base]
			if !ok || b.URI == "" || absolute(b.URI) {
				break
			}
			rel = strings.TrimSuffix(b.URI, "/") + "/" + strings.TrimPrefix(rel, "/")
			base = b.URIBaseID
		}
		return clean(unescape(rel))
	}
	p := filePath(rel)
	if p == "" {
		return rel // another scheme: kept as the scanner wrote it
	}
	root := ""
	try := func(u string) {
		if r := filePath(u); r != "" {
			r = strings.TrimSuffix(r, "/") + "/"
			if strings.HasPrefix(p, r) && len(r) > len(root) {
				root = r
			}
		}
	}
	for _, b := range rs.bases {
		if b.URIBaseID == "" {
			try(b.URI)
		}
	}
	for _, d := range rs.dirs {
		try(d)
	}
	if root == "" {
		return p
	}
	return clean(p[len(root):])
}

// absolute reports a URI with a scheme of two characters or more (so not
// a Windows drive letter) or an absolute path.
func absolute(u string) bool {
	return strings.HasPrefix(u, "/") || hasScheme(u)
}

// hasScheme reports a scheme of two characters or more before a colon:
// a letter, then letters, digits, "+", "-" and ".".
func hasScheme(u string) bool {
	for i := range len(u) {
		c := u[i]
		switch {
		case c == ':':
			return i >= 2
		case c|0x20 >= 'a' && c|0x20 <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// filePath is the decoded path of a file: URI or of an absolute path, "" for
// any other URI.
func filePath(u string) string {
	if strings.HasPrefix(u, "/") {
		return unescape(u)
	}
	x, err := url.Parse(u)
	if err != nil || !strings.EqualFold(x.Scheme, "file") {
		return ""
	}
	if x.Path == "" {
		return unescape(x.Opaque)
	}
	return x.Path
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// clean tidies a relative path: no "./", no doubled or trailing slash.
func clean(p string) string {
	if p == "" {
		return ""
	}
	c := path.Clean(p)
	if c == "." {
		return ""
	}
	return strings.TrimPrefix(c, "/")
}

func containsFold(s []string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}
