package api

import (
	"errors"

	"github.com/scangate/scangate/internal/scangate"
)

// What work that is not an HTTP request (an upload's ingest, internal/trigger)
// needs to fail as the routes answer: its failures are kept as the problem
// details POST /pr/scan/sarif would have answered.

// Failf is an error answered with status and the detail.
func Failf(status int, format string, args ...any) error { return failf(status, format, args...) }

// ProblemOf is the problem details err is answered with.
func ProblemOf(err error) scangate.Problem { return problemOf(err) }

// SARIFError gives a reading error of a SARIF log its status: a breached
// limit 413, undecodable input 400, a log that is not SARIF 2.1.0 422.
func SARIFError(err error) error { return sarifError(err) }

// Refused reports whether err refuses the request itself, so that no
// retry changes it: an error with its own status (the log, the object), or
// a recording the store refused (invalid, conflicting, not found).
func Refused(err error) bool {
	var he *httpError
	if errors.As(err, &he) {
		return true
	}
	switch scangate.KindOf(err) {
	case scangate.KindInvalid, scangate.KindConflict, scangate.KindNotFound:
		return true
	}
	return false
}
