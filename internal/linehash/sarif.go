package linehash

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scangate/scangate/internal/sarifuri"
)

// key is the partialFingerprints member GitHub code scanning reads.
const key = "primaryLocationLineHash"

// MaxLog is the largest log (its JSON) Add reads: reading one takes a few
// times its size in memory; a larger log is sent as it is.
const MaxLog = 512 << 20

// maxBaseChain bounds a chain of uriBaseIds through originalUriBaseIds.
const maxBaseChain = 8

// Summary counts what Add did to the results of a log.
type Summary struct {
	Added   int // results given a computed hash
	Kept    int // results that had one, kept as given
	Skipped int // results with a line in a file that could not be hashed
	// FirstSkipped says which and why, for the first of them.
	FirstSkipped string
	// TooLarge says the log was not read: its JSON is over MaxLog.
	TooLarge bool
}

// String is the summary for people, "" when nothing was skipped.
func (s Summary) String() string {
	if s.TooLarge {
		return fmt.Sprintf("no %s computed: the log is over %d MiB", key, MaxLog>>20)
	}
	if s.Skipped == 0 {
		return ""
	}
	return fmt.Sprintf("no %s computed for %d of %d results with a line in a file (first: %s)",
		key, s.Skipped, s.Added+s.Kept+s.Skipped, s.FirstSkipped)
}

func (s *Summary) skip(why string) {
	if s.Skipped == 0 {
		s.FirstSkipped = why
	}
	s.Skipped++
}

// Add gives every result of a SARIF log (its JSON, or the gzip of it) that
// has a line of a file in the checkout and no primaryLocationLineHash the
// one GitHub's upload action computes. A file is read once whatever the
// number of its results, and only a file inside the checkout is read.
//
// It returns the log unchanged when it adds nothing or cannot read it as a
// SARIF log (the service then says what is wrong with it), else the log's
// JSON with the hashes added (not gzipped; members in another order).
func (c *Checkout) Add(log []byte) ([]byte, Summary, error) {
	doc := log
	if bytes.HasPrefix(log, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(log))
		if err != nil {
			return log, Summary{}, nil
		}
		if doc, err = io.ReadAll(io.LimitReader(zr, int64(c.maxLog)+1)); err != nil {
			return log, Summary{}, nil
		}
	}
	if len(doc) > c.maxLog {
		return log, Summary{TooLarge: true}, nil
	}
	var top map[string]json.RawMessage
	var runs []json.RawMessage
	if json.Unmarshal(doc, &top) != nil || json.Unmarshal(top["runs"], &runs) != nil {
		return log, Summary{}, nil
	}
	var sum Summary
	var asks []*ask
	parsed := make([]*run, len(runs))
	for i, raw := range runs {
		r, err := readRun(raw)
		if err != nil {
			continue
		}
		parsed[i] = r
		asks = append(asks, c.asks(r, &sum)...)
	}
	if err := c.hash(asks, &sum); err != nil {
		return nil, Summary{}, err
	}
	if sum.Added == 0 {
		return log, sum, nil
	}
	for i, r := range parsed {
		if r == nil || !r.changed {
			continue
		}
		b, err := r.encode()
		if err != nil {
			return nil, Summary{}, err
		}
		runs[i] = b
	}
	b, err := encode(runs)
	if err != nil {
		return nil, Summary{}, err
	}
	top["runs"] = b
	out, err := encode(top)
	return out, sum, err
}

// run is what Add reads of a run: its members, its results and how to
// resolve their locations.
type run struct {
	members   map[string]json.RawMessage
	results   []json.RawMessage
	bases     map[string]artifactLocation
	artifacts []struct {
		Location artifactLocation `json:"location"`
	}
	dirs    []string // the invocations' working directories
	changed bool
}

type artifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
	Index     *int   `json:"index"`
}

// readRun reads the members of a run that locate its results; a member
// that is not as SARIF defines it is left for the service to report.
func readRun(raw json.RawMessage) (*run, error) {
	r := &run{}
	if err := json.Unmarshal(raw, &r.members); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(r.members["results"], &r.results); err != nil {
		return nil, err
	}
	_ = json.Unmarshal(r.members["originalUriBaseIds"], &r.bases)
	_ = json.Unmarshal(r.members["artifacts"], &r.artifacts)
	var invocations []struct {
		WorkingDirectory struct {
			URI string `json:"uri"`
		} `json:"workingDirectory"`
	}
	if json.Unmarshal(r.members["invocations"], &invocations) == nil {
		for _, in := range invocations {
			r.dirs = append(r.dirs, in.WorkingDirectory.URI)
		}
	}
	return r, nil
}

// encode writes the run back with its changed results.
func (r *run) encode() (json.RawMessage, error) {
	b, err := encode(r.results)
	if err != nil {
		return nil, err
	}
	r.members["results"] = b
	return encode(r.members)
}

// ask is a result's line to hash.
type ask struct {
	run   *run
	index int // the result's
	file  string
	line  int
	hash  string
}

// result is what Add reads of a result.
type result struct {
	Locations []struct {
		PhysicalLocation *struct {
			ArtifactLocation *artifactLocation `json:"artifactLocation"`
			Region           *struct {
				StartLine json.Number `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	PartialFingerprints json.RawMessage `json:"partialFingerprints"`
}

// asks lists the results of a run to give a hash: those whose first
// location is a line of a file, as GitHub's action takes them.
func (c *Checkout) asks(r *run, sum *Summary) []*ask {
	var asks []*ask
	for i, raw := range r.results {
		var res result
		if json.Unmarshal(raw, &res) != nil || len(res.Locations) == 0 {
			continue
		}
		pl := res.Locations[0].PhysicalLocation
		if pl == nil || pl.ArtifactLocation == nil || pl.Region == nil || pl.Region.StartLine == "" {
			continue // no line: GitHub hashes none either
		}
		line, err := strconv.Atoi(string(pl.Region.StartLine))
		if err != nil || line < 1 {
			continue
		}
		switch has, ok := hasHash(res.PartialFingerprints); {
		case !ok:
			continue
		case has:
			sum.Kept++
			continue
		}
		file, why := c.resolve(r, *pl.ArtifactLocation)
		if why != "" {
			sum.skip(why)
			continue
		}
		asks = append(asks, &ask{run: r, index: i, file: file, line: line})
	}
	return asks
}

// hasHash tells whether partialFingerprints holds a hash already; ok is
// false when it is not an object.
func hasHash(raw json.RawMessage) (has, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false, false
	}
	_, has = m[key]
	return has, true
}

// hash reads each file once for the lines asked of it and adds the hashes.
func (c *Checkout) hash(asks []*ask, sum *Summary) error {
	byFile := map[string][]*ask{}
	for _, a := range asks {
		byFile[a.file] = append(byFile[a.file], a)
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		group := byFile[f]
		lines := make([]int, len(group))
		for i, a := range group {
			lines[i] = a.line
		}
		hashes, why := c.lines(f, lines)
		for _, a := range group {
			if a.hash = hashes[a.line]; a.hash == "" {
				if why == "" {
					why = fmt.Sprintf("%s: line %d is past the end of the file", f, a.line)
				}
				sum.skip(why)
				continue
			}
			if err := a.set(); err != nil {
				return err
			}
			sum.Added++
		}
	}
	return nil
}

// set writes the hash into the result's partialFingerprints.
func (a *ask) set() error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(a.run.results[a.index], &m); err != nil {
		return fmt.Errorf("result %d: %w", a.index, err)
	}
	fp := map[string]json.RawMessage{}
	if raw := m["partialFingerprints"]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &fp); err != nil {
			return fmt.Errorf("result %d: partialFingerprints: %w", a.index, err)
		}
	}
	h, err := encode(a.hash)
	if err != nil {
		return err
	}
	fp[key] = h
	if m["partialFingerprints"], err = encode(fp); err != nil {
		return err
	}
	if a.run.results[a.index], err = encode(m); err != nil {
		return err
	}
	a.run.changed = true
	return nil
}

// lines hashes lines of a file of the checkout, or says why it cannot.
func (c *Checkout) lines(file string, lines []int) (map[int]string, string) {
	name := filepath.FromSlash(file)
	info, err := c.root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, file + ": no such file in the checkout " + c.dir
	case err != nil:
		return nil, fmt.Sprintf("%s: %v", file, err)
	case !info.Mode().IsRegular():
		return nil, file + ": not a regular file"
	}
	f, err := c.root.Open(name)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", file, err)
	}
	defer func() { _ = f.Close() }()
	hashes, err := Lines(f, lines)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", file, err)
	}
	return hashes, ""
}

// resolve gives the checkout-relative path of a location's file, or why
// it has none. A location may name an artifact of the run by index. A
// relative URI is resolved through originalUriBaseIds up to the first
// absolute base (the checkout's root, wherever the scanner ran) or a base
// the log does not define (the checkout); it may not climb out. An
// absolute file: URI or path must lie under the checkout's directory or a
// root the log names (an absolute base, an invocation's working
// directory), the longest of them taken. Another scheme is no file. These
// are the rules by which the service makes the path it records.
func (c *Checkout) resolve(r *run, loc artifactLocation) (string, string) {
	if loc.URI == "" && loc.Index != nil {
		if *loc.Index < 0 || *loc.Index >= len(r.artifacts) {
			return "", fmt.Sprintf("artifact %d: no such artifact in the run", *loc.Index)
		}
		loc = r.artifacts[*loc.Index].Location
	}
	if loc.URI == "" {
		return "", "a location without a uri"
	}
	var p string
	switch abs := sarifuri.FilePath(loc.URI); {
	case strings.HasPrefix(abs, "/"):
		var ok bool
		if p, ok = c.under(path.Clean(abs), r); !ok {
			return "", loc.URI + ": outside the checkout " + c.dir
		}
	case abs != "" || !sarifuri.Absolute(loc.URI):
		rel := abs // a file: URI's relative path, decoded
		if abs == "" {
			rel = loc.URI
			for id, steps := loc.URIBaseID, 0; id != "" && steps < maxBaseChain; steps++ {
				b, ok := r.bases[id]
				if !ok || b.URI == "" || sarifuri.Absolute(b.URI) {
					break
				}
				rel = strings.TrimSuffix(b.URI, "/") + "/" + strings.TrimPrefix(rel, "/")
				id = b.URIBaseID
			}
			rel = sarifuri.Unescape(rel)
		}
		if clean := path.Clean(rel); clean == ".." || strings.HasPrefix(clean, "../") {
			return "", loc.URI + ": climbs out of the checkout"
		}
		p = strings.TrimPrefix(path.Clean("/"+rel), "/")
	default:
		return "", loc.URI + ": not a file"
	}
	if p == "" {
		return "", loc.URI + ": not a file"
	}
	return p, ""
}

// under strips from an absolute path the longest root it lies under: the
// checkout's directory or a root the run names.
func (c *Checkout) under(p string, r *run) (string, bool) {
	roots := slices.Clone(c.roots)
	for _, b := range r.bases {
		if b.URIBaseID == "" {
			roots = append(roots, sarifuri.FilePath(b.URI))
		}
	}
	for _, d := range r.dirs {
		roots = append(roots, sarifuri.FilePath(d))
	}
	best := ""
	for _, root := range roots {
		if root == "" {
			continue
		}
		root = strings.TrimSuffix(path.Clean(root), "/") + "/"
		if strings.HasPrefix(p, root) && len(root) > len(best) {
			best = root
		}
	}
	if best == "" {
		return "", false
	}
	return p[len(best):], true
}

// encode is json.Marshal without escaping <, > and & (a log's text stays
// as the scanner wrote it).
func encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the log: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
