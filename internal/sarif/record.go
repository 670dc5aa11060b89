package sarif

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/scangate"
)

// Bounds of what a log records (docs/API.md, Record a scan).
const (
	maxName    = scangate.MaxNameLen // a finding's name, an alias, a rule, a tool's name or version
	maxPath    = scangate.MaxTextLen // a finding's path
	maxAliases = scangate.MaxAliases
)

// secretScanners are the tools whose every result is a secret.
var secretScanners = map[string]bool{"gitleaks": true, "ggshield": true, "detect-secrets": true, "trufflehog": true}

// component is what a run keeps of a toolComponent.
type component struct {
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
	index        int
	ptr          string
	driver       component
	extensions   []component
	rules        int
	bases        map[string]artifactLocation // originalUriBaseIds
	dirs         []string                    // invocations' working directories
	automationID string
	results      []pending // its results that are not skipped
	counts       Counts
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

// identity is what makes two findings one: a hash of their category, type,
// name (a vulnerability's ignoring case), path and line.
type identity [16]byte

// place is where a finding was made: its run, and its index among the
// run's findings of its type.
type place struct{ run, index int32 }

func identityOf(category string, t scangate.ScanType, f *scangate.Finding) identity {
	line := ""
	if f.Line != nil {
		line = strconv.FormatInt(*f.Line, 10)
	}
	sum := sha256.Sum256([]byte(category + "\x00" + string(t) + "\x00" + scangate.FindingKey(t, f.Name) + "\x00" + f.Path + "\x00" + line))
	return identity(sum[:16])
}

// record maps a run's results to findings once the run is read, and hands
// the run on.
func (r *reader) record(rs *runState) error {
	name := rs.driver.name
	run := &Run{Index: rs.index, Tool: Tool{Name: name, Version: cmp.Or(rs.driver.version, rs.driver.semanticVersion)},
		Type: scangate.ScanVulnerability, Counts: rs.counts}
	if secretScanners[strings.ToLower(name)] {
		run.Type = scangate.ScanSecret
	}
	var err error
	if run.Category, err = rs.category(); err != nil {
		return err
	}
	if r.category != "" {
		run.Category = r.category
	}
	trivy := strings.EqualFold(name, "trivy")
	if run.Type == scangate.ScanSecret { // most of a run's findings are of its tool's type
		run.Secrets = make([]scangate.Finding, 0, len(rs.results))
	} else {
		run.Vulnerabilities = make([]scangate.Finding, 0, len(rs.results))
	}
	for i := range rs.results {
		p := &rs.results[i]
		ptr := rs.ptr + "/results/" + itoa(p.index)
		d := rs.descriptor(p)
		f := scangate.Finding{Rule: cmp.Or(p.ruleID, idOf(d)), InSource: p.suppressed}
		if p.line > 0 {
			line := p.line // not &p.line: a finding must not keep the run's results alive
			f.Line = &line
		}
		var problem string
		if f.Path, problem = rs.repoPath(p.uri, p.base); problem != "" {
			return &SchemaError{Pointer: ptr + "/locations/0/physicalLocation/artifactLocation/uri", Detail: problem}
		}
		t := scangate.ScanVulnerability
		if p.bag.secret || run.Type == scangate.ScanSecret || d != nil && (d.bag.secret || trivy && d.name == "Secret") {
			t = scangate.ScanSecret
			f.Name = secretName(p, f.Rule, f.Path)
		} else {
			f.Name, f.Aliases = advisoryName(f.Rule, d, p)
		}
		f.Severity = severity(t, p, d)
		f.Fingerprint, f.FingerprintSource = fingerprint(p, &f)
		if err := check(&f, ptr); err != nil {
			return err
		}
		if err := r.add(run, t, f, ptr); err != nil {
			return err
		}
	}
	for _, f := range slices.Concat(run.Secrets, run.Vulnerabilities) {
		run.Recorded++
		if f.InSource {
			run.SuppressedInSource++
		}
	}
	rs.results = nil
	r.total.add(run.Counts)
	return r.h(run)
}

// fingerprint is a result's fingerprint and its source: its
// primaryLocationLineHash, else its scanner's other fingerprints, else
// the base of a derived one (the recording numbers its occurrences:
// scangate.Occurrences). A secret named by its location (loc:, which
// holds its line) is derived without its name, so that its fingerprint
// holds no line number.
func fingerprint(p *pending, f *scangate.Finding) (string, string) {
	switch {
	case p.lineHash != "":
		return p.lineHash, scangate.FingerprintLineHash
	case p.scannerFP != "":
		return p.scannerFP, scangate.FingerprintScanner
	}
	name := f.Name
	if strings.HasPrefix(name, "loc:") {
		name = ""
	}
	return scangate.DerivedFingerprint(f.Rule, f.Path, name, p.snippet), scangate.FingerprintDerived
}

func idOf(d *descriptor) string {
	if d == nil {
		return ""
	}
	return d.id
}

// add records a finding of a run once per identity: a duplicate within the
// run merges into the first (suppressed only if both are, aliases united,
// the higher severity); one of an earlier run of the same category is
// dropped.
func (r *reader) add(run *Run, t scangate.ScanType, f scangate.Finding, ptr string) error {
	id := identityOf(run.Category, t, &f)
	list := &run.Vulnerabilities
	if t == scangate.ScanSecret {
		list = &run.Secrets
	}
	if at, ok := r.seen[id]; ok {
		run.Duplicates++
		if at.run != int32(run.Index) {
			return nil
		}
		g := &(*list)[at.index]
		g.InSource = g.InSource && f.InSource
		if !g.Severity.AtLeast(f.Severity) {
			g.Severity = f.Severity
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
	if k := (pairKey{run.Category, t}); r.per[k] >= r.lim.FindingsPerType {
		return &LimitError{Limit: "findings_per_type", Max: int64(r.lim.FindingsPerType), Pointer: ptr}
	}
	r.per[pairKey{run.Category, t}]++
	r.seen[id] = place{run: int32(run.Index), index: int32(len(*list))}
	*list = append(*list, f)
	return nil
}

// category derives a run's category: its automationDetails.id up to the
// last "/" when that leaves something, else its driver's name lowercased;
// either normalized (scangate.NormalizeCategory), "default" if that
// leaves nothing, and at most 100 characters.
func (rs *runState) category() (string, error) {
	if i := strings.LastIndexByte(rs.automationID, '/'); i > 0 {
		c := scangate.NormalizeCategory(rs.automationID[:i])
		if len(c) > scangate.MaxCategoryLen {
			return "", &SchemaError{Pointer: rs.ptr + "/automationDetails/id", Detail: "must give a category (what precedes its last /) of at most 100 characters"}
		}
		return c, nil
	}
	c := scangate.NormalizeCategory(strings.ToLower(rs.driver.name))
	switch {
	case c == "":
		return scangate.DefaultCategory, nil
	case len(c) > scangate.MaxCategoryLen:
		return "", &SchemaError{Pointer: rs.ptr + "/tool/driver/name", Detail: "must give a category of at most 100 characters (the run has no automationDetails.id)"}
	}
	return c, nil
}

// severity maps a finding's severity: a security-severity (CVSS score) of
// the result, else of its rule; else, for a secret, high; else the
// result's level, else its rule's default level, else warning.
func severity(t scangate.ScanType, p *pending, d *descriptor) scangate.Severity {
	b := p.bag
	if !b.scored && d != nil {
		b = d.bag
	}
	switch {
	case b.scored && b.score >= 9:
		return scangate.SeverityCritical
	case b.scored && b.score >= 7:
		return scangate.SeverityHigh
	case b.scored && b.score >= 4:
		return scangate.SeverityMedium
	case b.scored && b.score > 0:
		return scangate.SeverityLow
	case b.scored:
		return scangate.SeverityNone
	case t == scangate.ScanSecret:
		return scangate.SeverityHigh
	}
	l := p.level
	if l == levelAbsent && d != nil {
		l = d.level
	}
	switch l {
	case levelError:
		return scangate.SeverityHigh
	case levelNote:
		return scangate.SeverityLow
	case levelNone:
		return scangate.SeverityNone
	}
	return scangate.SeverityMedium
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
	if p.line > 0 {
		line = strconv.FormatInt(p.line, 10)
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
		others = append(append(others, d.deprecated...), d.bag.advisories...)
	}
	others = append(others, p.bag.advisories...)
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

// checkName is what is wrong with a name that a scan keeps (a finding's
// name, alias or rule, a tool's name or version), or "".
func checkName(s string) string {
	if utf8.RuneCountInString(s) > maxName {
		return "must be at most 256 characters: it is kept in the scans the log records"
	}
	if _, _, hidden := scangate.Hidden(s); hidden {
		return "must not hold control or format characters: it is kept in the scans the log records"
	}
	return ""
}

// check applies the bounds of a recorded finding.
func check(f *scangate.Finding, ptr string) error {
	if f.Name == "" {
		return &SchemaError{Pointer: ptr + "/ruleId", Detail: "is required to record a vulnerability: no ruleId, rule.id or rule of the tool names it"}
	}
	if problem := cmp.Or(checkName(f.Name), checkName(f.Rule)); problem != "" {
		return &SchemaError{Pointer: ptr + "/ruleId", Detail: problem}
	}
	if len(f.Aliases) > maxAliases {
		return &SchemaError{Pointer: ptr, Detail: "has more than 20 aliases (its rule's deprecatedIds and the advisory ids in tags and properties)"}
	}
	for _, a := range f.Aliases {
		if checkName(a) != "" {
			return &SchemaError{Pointer: ptr, Detail: "has an alias (a deprecatedId of its rule) longer than 256 characters or holding control or format characters"}
		}
	}
	return nil
}

func containsFold(s []string, v string) bool {
	for _, x := range s {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}
