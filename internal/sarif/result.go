package sarif

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/scangate/scangate/internal/scangate"
)

// artifactLocation is what the reader keeps of an artifactLocation.
type artifactLocation struct {
	URI       string
	URIBaseID string
}

// level is a SARIF level, or none given.
type level uint8

const (
	levelAbsent level = iota
	levelNone
	levelNote
	levelWarning
	levelError
)

var levels = map[string]level{"none": levelNone, "note": levelNote, "warning": levelWarning, "error": levelError}

// descriptor is what a run keeps of one of its rules.
type descriptor struct {
	id         string
	name       string
	deprecated []string
	bag        bag
	level      level // defaultConfiguration.level
}

// pending is what a run keeps of one result until the run is read whole:
// a secret's value only as its hash.
type pending struct {
	index      int
	ruleID     string // ruleId, else rule.id
	ruleIndex  int64  // -1: none
	component  int    // -1: the driver; else tool.extensions[component]
	suppressed bool
	uri, base  string
	line       int64              // 0: none
	value      secretText         // the snippet that holds a secret's value
	ggshield   string             // partialFingerprints["secret/v1"]
	lineHash   string             // partialFingerprints.primaryLocationLineHash
	scannerFP  string             // its other partialFingerprints or fingerprints, joined (scangate.ScannerFingerprint)
	fps        map[string]string  // those entries, while the result is read
	snippet    *[sha256.Size]byte // the first location's snippet without whitespace (scangate.SnippetSum)
	bag        bag
	level      level
}

var (
	kinds          = []string{"pass", "open", "informational", "notApplicable", "review", "fail"}
	baselineStates = []string{"new", "unchanged", "updated", "absent"}
	suppressKinds  = []string{"inSource", "external"}
	statuses       = []string{"accepted", "underReview", "rejected"}
)

// result reads one result, counts it, and keeps it for the end of the run
// unless it is skipped.
func (r *reader) result(rs *runState, i int) error {
	if rs.counts.Results >= r.lim.ResultsPerRun {
		return &LimitError{Limit: "results_per_run", Max: int64(r.lim.ResultsPerRun), Pointer: rs.ptr + "/results/" + itoa(i)}
	}
	if r.total.Results+rs.counts.Results >= r.lim.Results {
		return &LimitError{Limit: "results", Max: int64(r.lim.Results), Pointer: rs.ptr + "/results/" + itoa(i)}
	}
	rs.counts.Results++
	p := pending{index: i, ruleIndex: -1, component: -1}
	var kind, baseline, refID string
	var message bool
	ruleIndex, refIndex := int64(-1), int64(-1)
	err := r.object(true, func(name []byte) error {
		var err error
		switch string(name) {
		case "ruleId":
			p.ruleID, err = r.str()
		case "ruleIndex":
			ruleIndex, err = r.index(-1)
		case "rule":
			err = r.ruleRef(&p, &refID, &refIndex)
		case "kind":
			kind, err = r.enum(kinds)
		case "baselineState":
			baseline, err = r.enum(baselineStates)
		case "level":
			err = r.level(&p.level)
		case "message":
			message, err = r.message()
		case "locations":
			err = r.array(true, func(j int) error { return r.location(&p, j == 0) })
		case "suppressions":
			err = r.array(true, func(int) error { return r.suppression(&p) })
		case "partialFingerprints":
			err = r.fingerprints(&p, partial)
		case "fingerprints":
			err = r.fingerprints(&p, whole)
		case "properties":
			err = r.properties(&p.bag)
		default:
			err = r.skip()
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case !message:
		return &SchemaError{Pointer: rs.ptr + "/results/" + itoa(i) + "/message", Detail: "is required, with text or id"}
	case kind != "" && kind != "fail" || baseline == "absent":
		rs.counts.Skipped++
		return nil
	}
	p.scannerFP = scangate.ScannerFingerprint(p.fps)
	p.fps = nil
	p.ruleID = cmp.Or(p.ruleID, refID)
	p.ruleIndex = ruleIndex
	if p.ruleIndex < 0 {
		p.ruleIndex = refIndex
	}
	rs.results = append(rs.results, p)
	return nil
}

// message reads a result's message and reports whether it has a text or
// an id.
func (r *reader) message() (bool, error) {
	has := false
	err := r.object(true, func(name []byte) error {
		if n := string(name); n != "text" && n != "id" {
			return r.skip()
		}
		_, ok, err := r.text()
		has = has || ok
		return err
	})
	return has, err
}

// member reads an object (null: none) and returns its string member of
// that name ("" if it has none).
func (r *reader) member(name string) (string, error) {
	var s string
	err := r.object(true, func(n []byte) error {
		if string(n) != name {
			return r.skip()
		}
		var err error
		s, err = r.str()
		return err
	})
	return s, err
}

// Which of a result's fingerprint members is read.
const (
	partial = iota // partialFingerprints
	whole          // fingerprints
)

// fingerprints reads a result's partialFingerprints or fingerprints: the
// primaryLocationLineHash (kept as given when it is 1 to
// scangate.MaxFingerprintLen characters), ggshield's secret/v1 (also
// kept for the secret's name), and every other entry, which the result's
// scanner fingerprint joins (partial ones first read win on a key both
// name).
func (r *reader) fingerprints(p *pending, which int) error {
	return r.object(true, func(n []byte) error {
		v, err := r.str()
		if err != nil || v == "" {
			return err
		}
		switch name := string(n); {
		case which == partial && name == "primaryLocationLineHash":
			if len([]rune(v)) <= scangate.MaxFingerprintLen {
				p.lineHash = v
			}
		default:
			if which == partial && name == "secret/v1" {
				p.ggshield = v
			}
			if p.fps == nil {
				p.fps = map[string]string{}
			}
			if _, ok := p.fps[name]; !ok {
				p.fps[name] = v
			}
		}
		return nil
	})
}

// index reads an index: an integer of least or more (null: absent, -1).
func (r *reader) index(least int64) (int64, error) {
	n, ok, err := r.integer()
	switch {
	case err != nil || !ok:
		return -1, err
	case n < least:
		return -1, r.schema("must be " + strconv.FormatInt(least, 10) + " or more")
	}
	return n, nil
}

// ruleRef reads a result's rule: its id, index and tool component.
func (r *reader) ruleRef(p *pending, id *string, index *int64) error {
	return r.object(true, func(name []byte) error {
		var err error
		switch string(name) {
		case "id":
			*id, err = r.str()
		case "index":
			*index, err = r.index(-1)
		case "toolComponent":
			err = r.object(true, func(name []byte) error {
				if string(name) != "index" {
					return r.skip()
				}
				n, err := r.index(0)
				if n >= 0 {
					p.component = int(min(n, 1<<30))
				}
				return err
			})
		default:
			err = r.skip()
		}
		return err
	})
}

// enum reads a string that must be one of allowed, or empty (absent).
func (r *reader) enum(allowed []string) (string, error) {
	s, err := r.str()
	if err != nil || s == "" || slices.Contains(allowed, s) {
		return s, err
	}
	return "", r.schema("must be one of " + strings.Join(allowed, ", "))
}

// level reads a level; a value that is not one of SARIF's is absent.
func (r *reader) level(dst *level) error {
	s, _, err := r.text()
	*dst = levels[string(s)]
	return err
}

// location reads a location; only the first one's path, line and snippet
// are kept.
func (r *reader) location(p *pending, first bool) error {
	return r.object(true, func(name []byte) error {
		if string(name) != "physicalLocation" {
			return r.skip()
		}
		return r.object(true, func(name []byte) error {
			switch string(name) {
			case "artifactLocation":
				loc, err := r.artifactLocation()
				if first {
					p.uri, p.base = loc.URI, loc.URIBaseID
				}
				return err
			case "region":
				return r.region(p, first, true)
			case "contextRegion":
				return r.region(p, first, false)
			}
			return r.skip()
		})
	})
}

// region reads a region: of the first location, its start line (of the
// region itself) and its snippet (of the region, else of the context
// region) are kept.
func (r *reader) region(p *pending, first, own bool) error {
	return r.object(true, func(name []byte) error {
		switch string(name) {
		case "startLine":
			n, ok, err := r.integer()
			switch {
			case err != nil || !ok || !first || !own:
				return err
			case n < 1:
				return r.schema("must be 1 or more")
			}
			p.line = n
			return nil
		case "snippet":
			return r.object(true, func(name []byte) error {
				if string(name) != "text" {
					return r.skip()
				}
				v, _, err := r.text()
				if first && (own || !p.value.set) {
					p.value.hash(v)
					if len(v) > 0 {
						sum := scangate.SnippetSum(v)
						p.snippet = &sum
					}
				}
				clear(r.scratch) // the value, when it had escapes
				return err
			})
		}
		return r.skip()
	})
}

// suppression reads a suppression: one whose status is absent or accepted
// suppresses the result.
func (r *reader) suppression(p *pending) error {
	status, hasStatus := "", false
	err := r.object(true, func(name []byte) error {
		var err error
		switch string(name) {
		case "kind":
			_, err = r.enum(suppressKinds)
		case "status":
			status, err = r.enum(statuses)
			hasStatus = status != ""
		default:
			err = r.skip()
		}
		return err
	})
	if !hasStatus || status == "accepted" {
		p.suppressed = true
	}
	return err
}

// secretText is a snippet's text, kept only as its SHA-256: the value is
// hashed as it is decoded and never stored.
type secretText struct {
	set      bool // a non-empty string
	redacted bool // REDACTED, ending in ... or masked with ***
	sum      [sha256.Size]byte
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

// bag is what a property bag tells: a secret tag, advisory ids and a
// security severity.
type bag struct {
	secret     bool
	advisories []string // in its tags, then in its other members by name
	score      float64  // security-severity, a CVSS score
	scored     bool
}

// properties reads a property bag: its tags, advisory ids in its tags and
// then in any other member whose value is a string or an array of strings
// (in the order of their names), and security-severity.
func (r *reader) properties(b *bag) error {
	type named struct {
		name       string
		advisories []string
	}
	var others []named
	err := r.object(true, func(name []byte) error {
		switch n := string(name); n {
		case "tags":
			return r.array(true, func(int) error {
				tag, ok, err := r.text()
				if err == nil && !ok {
					err = r.schema("must be a string")
				}
				b.secret = b.secret || strings.EqualFold(string(tag), "secret")
				b.advisories = collect(b.advisories, tag)
				return err
			})
		case "security-severity":
			return r.score(b)
		default:
			adv, err := r.advisories()
			if len(adv) > 0 {
				others = append(others, named{n, adv})
			}
			return err
		}
	})
	slices.SortFunc(others, func(a, b named) int { return strings.Compare(a.name, b.name) })
	for _, o := range others {
		b.advisories = append(b.advisories, o.advisories...)
	}
	return err
}

// score reads security-severity: a CVSS score from 0 to 10, as a number or
// as a string of a decimal number; anything else is no score.
func (r *reader) score(b *bag) error {
	k, err := r.peek()
	if err != nil {
		return err
	}
	var v []byte
	switch k {
	case '0':
		v, err = r.dec.ReadValue()
		err = r.fail(err)
	case '"':
		v, _, err = r.text()
	default:
		return r.skip()
	}
	if f, perr := strconv.ParseFloat(string(v), 64); err == nil && perr == nil && isDecimal(v) && f >= 0 && f <= 10 {
		b.score, b.scored = f, true
	}
	return err
}

// isDecimal reports a decimal number as JSON writes one:
// -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isDecimal(s []byte) bool {
	digits := func(i int) int {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	j := digits(i)
	if j == i {
		return false
	}
	if j < len(s) && s[j] == '.' {
		if k := digits(j + 1); k > j+1 {
			j = k
		} else {
			return false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			j = k
		} else {
			return false
		}
	}
	return j == len(s)
}

// advisories reads a property's value and returns the advisory ids in it
// when it is a string or an array of strings.
func (r *reader) advisories() ([]string, error) {
	k, err := r.peek()
	switch {
	case err != nil:
		return nil, err
	case k == '"':
		s, _, err := r.text()
		return collect(nil, s), err
	case k != '[':
		return nil, r.skip()
	}
	var out []string
	strs := true
	err = r.array(false, func(int) error {
		if k, err := r.peek(); err != nil || k != '"' {
			strs = false
			if err == nil {
				err = r.skip()
			}
			return err
		}
		s, _, err := r.text()
		out = collect(out, s)
		return err
	})
	if !strs {
		return nil, err
	}
	return out, err
}

// collect appends s to out when it is an advisory id.
func collect(out []string, s []byte) []string {
	if len(s) <= 64 && len(s) > 0 && advisory().Match(s) {
		out = append(out, string(s))
	}
	return out
}

// advisory matches the ids of the advisory databases docs/API.md names.
// It is compiled on first use, not at the start of every Lambda.
var advisory = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(CVE-\d{4}-\d{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}|GO-\d{4}-\d{4,}|PYSEC-\d{4}-\d+|RUSTSEC-\d{4}-\d{4,}|OSV-\d{4}-\d+)$`)
})

func isAdvisory(s string) bool { return len(s) <= 64 && advisory().MatchString(s) }
