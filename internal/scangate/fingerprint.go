package scangate

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Where a finding's fingerprint comes from (fingerprint_source).
const (
	// FingerprintLineHash: SARIF's partialFingerprints.primaryLocationLineHash,
	// as given (GitHub's, which the CLI computes when the scanner did not).
	FingerprintLineHash = "primaryLocationLineHash"
	// FingerprintScanner: the scanner's other partialFingerprints or
	// fingerprints, sorted by key and joined; or POST /pr/scan's
	// fingerprint.
	FingerprintScanner = "scanner"
	// FingerprintDerived: derived by scangate (DerivedFingerprint, with
	// its occurrence suffix).
	FingerprintDerived = "derived"
)

// MaxFingerprintLen bounds a fingerprint, in characters.
const MaxFingerprintLen = 256

// SnippetSum is the SHA-256 of a region's snippet text with its
// whitespace removed (what a derived fingerprint takes of it, so that
// re-indenting a line keeps it).
func SnippetSum(text []byte) [sha256.Size]byte {
	h := sha256.New()
	for _, r := range string(text) {
		if !unicode.IsSpace(r) {
			var buf [4]byte
			n := copy(buf[:], string(r))
			h.Write(buf[:n])
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// DerivedFingerprint is the base of a derived fingerprint: the SHA-256
// (hex) of the rule id, the repository-relative path, the finding's name
// and, when the scanner gave one, the SHA-256 of its snippet without
// whitespace (snippet nil for none). Never a line number: a finding keeps
// it when lines above it move. Occurrences adds the suffix ":N".
func DerivedFingerprint(rule, path, name string, snippet *[sha256.Size]byte) string {
	h := sha256.New()
	for _, s := range []string{rule, path, name} {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	if snippet != nil {
		h.Write(snippet[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ScannerFingerprint joins a scanner's fingerprints, sorted by key, as
// key=value separated by ";"; one longer than MaxFingerprintLen is
// replaced by "sha256:" and the SHA-256 (hex) of the joined text. ""
// when there are none.
func ScannerFingerprint(fps map[string]string) string {
	if len(fps) == 0 {
		return ""
	}
	keys := make([]string, 0, len(fps))
	for k := range fps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k + "=" + fps[k])
	}
	if s := b.String(); len([]rune(s)) <= MaxFingerprintLen {
		return s
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Occurrences numbers the derived fingerprints of scans: the N-th finding
// of a scan with the same base (DerivedFingerprint) in (path, line) order
// gets ":N" (the base covers the path, so by line). Note every derived
// finding first (the first read of a log), then Seal, then Suffix each
// (from any goroutine). It keeps about 24 bytes a finding noted, and 16
// and a slice header a distinct base.
type Occurrences struct {
	lines  map[occKey][]int64
	sealed bool
}

type occKey struct {
	scan int
	base [16]byte
}

// NewOccurrences makes an empty numbering.
func NewOccurrences() *Occurrences { return &Occurrences{lines: map[occKey][]int64{}} }

func occOf(scan int, f *Finding) (occKey, bool) {
	if f.FingerprintSource != FingerprintDerived || len(f.Fingerprint) != 2*sha256.Size {
		return occKey{}, false
	}
	k := occKey{scan: scan}
	if _, err := hex.Decode(k.base[:], []byte(f.Fingerprint[:32])); err != nil {
		return occKey{}, false
	}
	return k, true
}

func lineOf(f *Finding) int64 {
	if f.Line == nil {
		return 0
	}
	return *f.Line
}

// Note notes a finding of scan (its index among the recording's scans)
// whose fingerprint is a derived base.
func (o *Occurrences) Note(scan int, f *Finding) {
	if k, ok := occOf(scan, f); ok {
		o.lines[k] = append(o.lines[k], lineOf(f))
	}
}

// Seal orders what was noted; Suffix may then run.
func (o *Occurrences) Seal() {
	for _, l := range o.lines {
		slices.Sort(l)
	}
	o.sealed = true
}

// Suffix appends ":N" to a derived base: N is the place of the finding's
// line among its scan's findings of the same base, from 1 (1 for one
// never noted).
func (o *Occurrences) Suffix(scan int, f *Finding) {
	k, ok := occOf(scan, f)
	if !ok {
		return
	}
	n := 1
	if l := o.lines[k]; o.sealed {
		i, _ := slices.BinarySearch(l, lineOf(f))
		n = i + 1
	}
	f.Fingerprint += ":" + strconv.Itoa(n)
}

// FingerprintFindings gives the findings of one scan, whole, that have
// no fingerprint a derived one (from rule, path and name: they have no
// snippet), numbered.
func FingerprintFindings(fs []Finding) {
	derived := false
	for i := range fs {
		if f := &fs[i]; f.Fingerprint == "" {
			f.Fingerprint, f.FingerprintSource, derived = DerivedFingerprint(f.Rule, f.Path, f.Name, nil), FingerprintDerived, true
		}
	}
	if derived {
		NumberFindings(fs)
	}
}

// NumberFindings gives the findings of one scan, whole, their derived
// fingerprints' suffixes.
func NumberFindings(fs []Finding) {
	o := NewOccurrences()
	for i := range fs {
		o.Note(0, &fs[i])
	}
	o.Seal()
	for i := range fs {
		o.Suffix(0, &fs[i])
	}
}
