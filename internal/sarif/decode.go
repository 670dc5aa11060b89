package sarif

import (
	"errors"

	"github.com/scangate/scangate/internal/scangate"
)

// reader reads one log: the log, its runs, their tools and results member
// by member, in one pass; each run is mapped and handed on once it is read.
type reader struct {
	*decoder
	ptr      string // the log's pointer
	lim      Limits
	category string // every run's category when set (Options.Category)
	h        Handler
	total    Counts
	seen     map[identity]place // every finding made: 24 bytes (and the map's own) each
	per      map[pairKey]int    // findings per (category, scan type)
}

// pairKey is a (category, scan type): one scan's findings.
type pairKey struct {
	category string
	typ      scangate.ScanType
}

func newReader(d *decoder, ptr string, o Options, h Handler) *reader {
	return &reader{decoder: d, ptr: ptr, lim: o.Limits.withDefaults(), category: o.Category, h: h,
		seen: map[identity]place{}, per: map[pairKey]int{}}
}

// read reads a log to its end. After a SchemaError it still reads the rest
// of the log, so that bytes that are no I-JSON (400) or too many (413)
// answer first, whatever the form the log came in.
func (r *reader) read() error {
	err := r.log()
	var se *SchemaError
	if !errors.As(err, &se) {
		return err
	}
	for r.dec.StackDepth() > r.base {
		if ferr := r.token(); ferr != nil {
			return ferr
		}
	}
	return err
}

// log reads the sarifLog object.
func (r *reader) log() error {
	version, runs, n := false, false, 0
	err := r.object(false, func(name []byte) error {
		switch string(name) {
		case "version":
			v, ok, err := r.text()
			if err != nil {
				return err
			}
			if !ok || string(v) != "2.1.0" {
				return errVersion(r.here())
			}
			version = true
			return nil
		case "runs":
			runs = true
			return r.array(true, func(i int) error {
				if i >= r.lim.Runs {
					return &LimitError{Limit: "runs", Max: int64(r.lim.Runs), Pointer: r.ptr + "/runs/" + itoa(i)}
				}
				n++
				return r.run(i)
			})
		}
		return r.skip()
	})
	switch {
	case err != nil:
		return err
	case !version:
		return errVersion(r.ptr + "/version")
	case !runs:
		return &SchemaError{Pointer: r.ptr + "/runs", Detail: "is required"}
	case n == 0:
		return &SchemaError{Pointer: r.ptr + "/runs", Detail: "must hold at least one run: a log without a run records no scan"}
	}
	return nil
}

func errVersion(ptr string) error {
	return &SchemaError{Pointer: ptr, Detail: `must be "2.1.0": only SARIF 2.1.0 is read`}
}

// run reads one run: its tool, base URIs, working directories, automation
// details and results. Its results are mapped once the whole run is read
// (SARIF does not order the members of an object: results may come before
// the tool or the base URIs), and the run is handed on.
func (r *reader) run(index int) error {
	rs := &runState{index: index, ptr: r.ptr + "/runs/" + itoa(index), bases: map[string]artifactLocation{}}
	hasTool := false
	err := r.object(false, func(name []byte) error {
		switch string(name) {
		case "tool":
			hasTool = true
			return r.tool(rs)
		case "originalUriBaseIds":
			return r.bases(rs)
		case "invocations":
			return r.array(true, func(int) error { return r.invocation(rs) })
		case "automationDetails":
			var err error
			rs.automationID, err = r.member("id")
			return err
		case "results":
			return r.array(true, func(i int) error { return r.result(rs, i) })
		}
		return r.skip()
	})
	if err != nil {
		return err
	}
	if !hasTool {
		return &SchemaError{Pointer: rs.ptr + "/tool", Detail: "is required"}
	}
	return r.record(rs)
}

// tool reads tool.driver and tool.extensions.
func (r *reader) tool(rs *runState) error {
	hasDriver := false
	err := r.object(false, func(name []byte) error {
		switch string(name) {
		case "driver":
			hasDriver = true
			return r.component(rs, &rs.driver, rs.ptr+"/tool/driver")
		case "extensions":
			return r.array(true, func(i int) error {
				ptr := rs.ptr + "/tool/extensions/" + itoa(i)
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
		err = &SchemaError{Pointer: rs.ptr + "/tool/driver", Detail: "is required"}
	}
	return err
}

// component reads a toolComponent: its name, version and rules.
func (r *reader) component(rs *runState, c *component, ptr string) error {
	hasName := false
	err := r.object(false, func(name []byte) error {
		switch string(name) {
		case "name":
			hasName = true
			return r.toolText(&c.name)
		case "version":
			return r.toolText(&c.version)
		case "semanticVersion":
			return r.toolText(&c.semanticVersion)
		case "rules":
			return r.array(true, func(i int) error {
				rptr := ptr + "/rules/" + itoa(i)
				if err := r.countRule(rs, rptr); err != nil {
					return err
				}
				return r.rule(c, rptr)
			})
		}
		return r.skip()
	})
	if err == nil && !hasName {
		err = &SchemaError{Pointer: ptr + "/name", Detail: "is required"}
	}
	return err
}

// toolText reads a tool component's name or version: kept in the scans it
// records, it is bounded as a finding's name is.
func (r *reader) toolText(dst *string) error {
	s, err := r.str()
	if err != nil {
		return err
	}
	if err := checkName(s); err != "" {
		return r.schema(err)
	}
	*dst = s
	return nil
}

func (r *reader) countRule(rs *runState, ptr string) error {
	rs.rules++
	if rs.rules > r.lim.RulesPerRun {
		return &LimitError{Limit: "rules_per_run", Max: int64(r.lim.RulesPerRun), Pointer: ptr}
	}
	return nil
}

// rule reads a reportingDescriptor.
func (r *reader) rule(c *component, ptr string) error {
	var d descriptor
	hasID := false
	err := r.object(true, func(name []byte) error {
		switch string(name) {
		case "id":
			id, ok, err := r.text()
			d.id, hasID = string(id), ok
			return err
		case "name":
			var err error
			d.name, err = r.str()
			return err
		case "deprecatedIds":
			return r.array(true, func(int) error {
				s, err := r.str()
				if s != "" {
					d.deprecated = append(d.deprecated, s)
				}
				return err
			})
		case "properties":
			return r.properties(&d.bag)
		case "defaultConfiguration":
			return r.object(true, func(name []byte) error {
				if string(name) != "level" {
					return r.skip()
				}
				return r.level(&d.level)
			})
		}
		return r.skip()
	})
	if err != nil {
		return err
	}
	if !hasID {
		return &SchemaError{Pointer: ptr + "/id", Detail: "is required"}
	}
	c.rules = append(c.rules, d)
	return nil
}

// bases reads originalUriBaseIds, and refuses a chain of base ids that
// loops or runs longer than maxBaseChain.
func (r *reader) bases(rs *runState) error {
	err := r.object(true, func(name []byte) error {
		key := string(name)
		loc, err := r.artifactLocation()
		rs.bases[key] = loc
		return err
	})
	if err != nil {
		return err
	}
	return rs.checkBases()
}

// invocation reads an invocation's working directory.
func (r *reader) invocation(rs *runState) error {
	return r.object(true, func(name []byte) error {
		if string(name) != "workingDirectory" {
			return r.skip()
		}
		loc, err := r.artifactLocation()
		if loc.URI != "" && len(rs.dirs) < 16 {
			rs.dirs = append(rs.dirs, loc.URI)
		}
		return err
	})
}

// artifactLocation reads an artifactLocation's uri and uriBaseId.
func (r *reader) artifactLocation() (artifactLocation, error) {
	var loc artifactLocation
	err := r.object(true, func(name []byte) error {
		var err error
		switch string(name) {
		case "uri":
			loc.URI, err = r.str()
		case "uriBaseId":
			loc.URIBaseID, err = r.str()
		default:
			err = r.skip()
		}
		return err
	})
	return loc, err
}
