// Package sarifuri reads the URIs by which SARIF logs name files, as both
// the service (the paths it records) and the CI client (the files it
// hashes) read them.
package sarifuri

import (
	"net/url"
	"strings"
)

// Absolute reports a URI with a scheme of two characters or more (so not
// a Windows drive letter) or an absolute path.
func Absolute(u string) bool {
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

// FilePath is the decoded path of a file: URI or of an absolute path, ""
// for any other URI.
func FilePath(u string) string {
	if strings.HasPrefix(u, "/") {
		return Unescape(u)
	}
	x, err := url.Parse(u)
	if err != nil || !strings.EqualFold(x.Scheme, "file") {
		return ""
	}
	if x.Path == "" {
		return Unescape(x.Opaque)
	}
	return x.Path
}

// Unescape percent-decodes a path; one that is not valid percent-encoding
// is kept as it is.
func Unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
