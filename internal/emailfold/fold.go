// Package emailfold holds the one form under which e-mail addresses are unique
// and matched. It is its own package because golang.org/x/text links its
// tables into every program that imports it: only the programs that store
// an address (create and update user, the admin CLI, the local stack)
// import it, and hand it to the handlers that need it.
package emailfold

import (
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Fold is NFKC, full Unicode case folding, NFKC again (folding can leave a
// string unnormalised). So σ, ς and Σ are one letter, a Kelvin sign is a k,
// full-width letters are letters and ß is ss. For ASCII it is lower-casing.
func Fold(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
}
