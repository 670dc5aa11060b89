package problem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/scangate/scangate/internal/problem"
	"github.com/scangate/scangate/internal/scangate"
)

// TestOf: an error's problem details carry its kind's status and title and
// its detail, the fields of an invalid input, and nothing of an internal
// error but that it happened.
func TestOf(t *testing.T) {
	invalid := scangate.Problems{{Pointer: "/name", Detail: "is required"}}.Err()
	for _, c := range []struct {
		err    error
		status int
		title  string
		detail string
		fields int
	}{
		{scangate.Errorf(scangate.KindTooLarge, "the log holds more than 20 runs"), 413, "Content Too Large", "the log holds more than 20 runs", 0},
		{scangate.Errorf(scangate.KindMalformed, "not gzip"), 400, "Bad Request", "not gzip", 0},
		{scangate.Errorf(scangate.KindTimedOut, "out of time"), 500, "Internal Server Error", "out of time", 0},
		{fmt.Errorf("record: %w", scangate.Errorf(scangate.KindNotFound, "no such upload")), 404, "Not Found", "no such upload", 0},
		{invalid, 422, "Unprocessable Entity", "the request body does not match the schema", 1},
		{errors.New("dynamodb: secret table name"), 500, "Internal Server Error", "an unexpected error occurred", 0},
		{&scangate.Error{Kind: scangate.KindInternal, Detail: "secret detail"}, 500, "Internal Server Error", "an unexpected error occurred", 0},
	} {
		p := problem.Of(c.err)
		if p.Type != "about:blank" || p.Status != c.status || p.Title != c.title || p.Detail != c.detail || len(p.Errors) != c.fields {
			t.Errorf("%v: %+v", c.err, p)
		}
	}
}
