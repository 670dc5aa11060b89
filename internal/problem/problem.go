// Package problem turns errors into RFC 9457 problem details: the body of
// every error answer of the API, and the errors an upload's ingest keeps
// (as POST /pr/scan/sarif would have answered them). It is the one place
// where a domain error's kind becomes an HTTP status, so that the use
// cases and the triggers report kinds (internal/scangate) and neither
// imports the HTTP adapter.
package problem

import (
	"errors"
	"net/http"

	"github.com/scangate/scangate/internal/scangate"
)

// StatusClientClosed is the status of an answer nobody reads because the
// client went away (nginx's 499; never sent).
const StatusClientClosed = 499

var kindStatus = map[scangate.Kind]int{
	scangate.KindGone:         StatusClientClosed,
	scangate.KindInvalid:      http.StatusUnprocessableEntity,
	scangate.KindNotFound:     http.StatusNotFound,
	scangate.KindConflict:     http.StatusConflict,
	scangate.KindUnauthorized: http.StatusUnauthorized,
	scangate.KindForbidden:    http.StatusForbidden,
	scangate.KindTooMany:      http.StatusTooManyRequests,
	scangate.KindUnavailable:  http.StatusServiceUnavailable,
	scangate.KindTooLarge:     http.StatusRequestEntityTooLarge,
	scangate.KindMalformed:    http.StatusBadRequest,
	scangate.KindTimedOut:     http.StatusInternalServerError,
}

// Status is the HTTP status of an error of kind k: 500 for KindInternal.
func Status(k scangate.Kind) int {
	if s, ok := kindStatus[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// PublicDetail is what a caller may be told about err: a domain error's
// detail, unless it is internal (a bug or an unexpected failure, whose
// detail may name what a caller must not learn).
func PublicDetail(err error) string {
	var de *scangate.Error
	if errors.As(err, &de) && de.Kind != scangate.KindInternal {
		return de.Detail
	}
	return "an unexpected error occurred"
}

// Of is the problem details of err: the status of its kind, its public
// detail and, for an invalid input, the fields it names.
func Of(err error) scangate.Problem {
	return With(Status(scangate.KindOf(err)), PublicDetail(err), fieldsOf(err))
}

// With is the problem details of status with detail and fields.
func With(status int, detail string, fields []scangate.FieldError) scangate.Problem {
	return scangate.Problem{Type: "about:blank", Title: Title(status), Status: status, Detail: detail, Errors: fields}
}

func fieldsOf(err error) []scangate.FieldError {
	var de *scangate.Error
	if errors.As(err, &de) {
		return de.Fields
	}
	return nil
}

// Title is a problem's title: the reason phrase of RFC 9110 for 413,
// "Content Too Large", as API Gateway's REQUEST_TOO_LARGE answer in
// template.yaml says (Go still says "Request Entity Too Large"), and Go's
// reason phrase otherwise.
func Title(status int) string {
	if status == http.StatusRequestEntityTooLarge {
		return "Content Too Large"
	}
	return http.StatusText(status)
}
