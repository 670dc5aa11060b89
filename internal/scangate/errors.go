// Package scangate holds the domain of the service: its records, the rules
// that govern them and the errors that operations report. It imports neither
// the AWS SDK nor aws-lambda-go.
package scangate

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error by what the caller should do about it.
type Kind int

// The kinds of domain error; each maps to one HTTP status in the API adapter.
const (
	KindInternal     Kind = iota // a bug or an unexpected failure
	KindInvalid                  // the request breaks the schema (422)
	KindNotFound                 // no such record (404)
	KindConflict                 // uniqueness or an invariant would break (409)
	KindUnauthorized             // bad credentials (401)
	KindForbidden                // role not allowed (403)
	KindTooMany                  // too many attempts (429)
	KindUnavailable              // the database failed or throttled after retries (503)
	KindGone                     // the caller went away before the answer (logged, never sent)
)

// FieldError names the member of a request body that is wrong, as a JSON
// pointer (RFC 6901), or the query parameter, and says why. The error of a
// member or parameter that is not one lists in Accepted the names that
// are, at that place, so that a client learns what it may send.
type FieldError struct {
	Pointer   string   `json:"pointer"`
	Parameter string   `json:"parameter,omitempty"` // a query parameter, for errors of the query string
	Detail    string   `json:"detail"`
	Accepted  []string `json:"accepted,omitempty"`
}

// MarshalJSON writes the pointer of a body's or log's error, also the
// whole document's (""), and the parameter, without a pointer, of a query
// string's.
func (f FieldError) MarshalJSON() ([]byte, error) {
	if f.Parameter != "" {
		return json.Marshal(struct {
			Parameter string   `json:"parameter"`
			Detail    string   `json:"detail"`
			Accepted  []string `json:"accepted,omitempty"`
		}{f.Parameter, f.Detail, f.Accepted})
	}
	type plain FieldError // without this method
	return json.Marshal(plain(f))
}

// Error is a domain error: a kind, a message meant for the caller, the
// offending fields for validation errors and a retry hint where one applies.
type Error struct {
	Kind       Kind
	Detail     string
	Fields     []FieldError
	RetryAfter time.Duration
	Err        error // the cause, for logs; never shown to callers
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Detail, e.Err)
	}
	return e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a domain error of the given kind.
func Errorf(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Unavailable wraps a database failure that retries could not overcome.
func Unavailable(err error) *Error {
	return &Error{Kind: KindUnavailable, Detail: "the database is unavailable; retry later", RetryAfter: time.Second, Err: err}
}

// Gone wraps the error of work abandoned because its caller went away (a
// client that disconnected from the local server); it is not a failure of
// the service.
func Gone(err error) *Error {
	return &Error{Kind: KindGone, Detail: "the client closed the request", Err: err}
}

// KindOf reports the kind of err: KindInternal unless err wraps an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Problems collects field errors while a request body is validated.
type Problems []FieldError

// Add records that the member at pointer is wrong.
func (p *Problems) Add(pointer, format string, args ...any) {
	*p = append(*p, FieldError{Pointer: pointer, Detail: fmt.Sprintf(format, args...)})
}

// Err returns a validation error listing the problems, or nil if there are none.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Detail: "the request body does not match the schema", Fields: p}
}
