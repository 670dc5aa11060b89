package sarif

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/sarifuri"
	"github.com/scangate/scangate/internal/scangate"
)

// maxBaseChain bounds a chain of uriBaseIds through originalUriBaseIds.
const maxBaseChain = 8

// checkBases refuses a base id whose chain of uriBaseIds loops or passes
// through more than maxBaseChain relative bases: it points at the
// uriBaseId of the first such base, in the order of their names.
func (rs *runState) checkBases() error {
	names := make([]string, 0, len(rs.bases))
	for k := range rs.bases {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, start := range names {
		id := start
		for steps := 0; ; steps++ {
			b, ok := rs.bases[id]
			if !ok || b.URIBaseID == "" {
				break
			}
			if b.URIBaseID == start || steps == maxBaseChain {
				detail := "must not lead back to this base: its chain of uriBaseIds loops"
				if b.URIBaseID != start {
					detail = "leads through more than 8 uriBaseIds"
				}
				return &SchemaError{Pointer: rs.ptr + "/originalUriBaseIds/" + escape(start) + "/uriBaseId", Detail: detail}
			}
			id = b.URIBaseID
		}
	}
	return nil
}

// repoPath makes a location's URI repository-relative, or says why it
// cannot be recorded. A relative URI is resolved through originalUriBaseIds
// up to the first absolute base (the checkout root) or a base the log does
// not define; it may not climb out of the checkout. An absolute file: URI
// or path is cleaned and loses the longest checkout root the log names (an
// absolute base, an invocation's working directory) that it starts with;
// under none, it stays absolute (a file of a container image). Another
// scheme is kept as written. Whatever it is, the path must be UTF-8 without
// control or format characters once percent-decoded.
func (rs *runState) repoPath(uri, base string) (string, string) {
	if uri == "" {
		return "", ""
	}
	var p string
	switch {
	case !absolute(uri):
		rel := uri
		for base != "" {
			b, ok := rs.bases[base]
			if !ok || b.URI == "" || absolute(b.URI) {
				break
			}
			rel = strings.TrimSuffix(b.URI, "/") + "/" + strings.TrimPrefix(rel, "/")
			base = b.URIBaseID
		}
		p = clean(unescape(rel))
		if p == ".." || strings.HasPrefix(p, "../") {
			return "", "must stay inside the checkout: the path climbs out of it with .."
		}
	case filePath(uri) == "":
		p = uri // another scheme: kept as the scanner wrote it
	default:
		p = rs.relative(path.Clean(filePath(uri)))
	}
	if !utf8.ValidString(p) {
		return "", "must name a path in UTF-8 once percent-decoded"
	}
	if c, _, hidden := scangate.Hidden(p); hidden {
		return "", fmt.Sprintf("must not hold control or format characters, percent-encoded or not (U+%04X)", c)
	}
	if utf8.RuneCountInString(p) > maxPath {
		return "", "must be at most 2048 characters"
	}
	return p, ""
}

// relative strips from an absolute path the longest checkout root the run
// names that it starts with.
func (rs *runState) relative(p string) string {
	root := ""
	try := func(u string) {
		if r := filePath(u); r != "" {
			r = strings.TrimSuffix(path.Clean(r), "/") + "/"
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

func absolute(u string) bool   { return sarifuri.Absolute(u) }
func filePath(u string) string { return sarifuri.FilePath(u) }
func unescape(s string) string { return sarifuri.Unescape(s) }

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
