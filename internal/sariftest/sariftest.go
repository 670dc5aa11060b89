// Package sariftest checks SARIF logs in tests against the SARIF 2.1.0
// JSON schema (sarif-schema-2.1.0.json beside this file: the copy the
// SARIF SDK ships in @microsoft/sarif-multitool-linux 5.7.0, whose
// "$schema" names JSON Schema 2020-12), with a maintained JSON Schema
// validator, formats asserted (uri, uri-reference, date-time, uuid).
package sariftest

import (
	"bytes"
	_ "embed"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed sarif-schema-2.1.0.json
var schemaText []byte

const schemaURL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaText))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// Validate reports whether log is a SARIF 2.1.0 log by the schema: nil,
// or the validator's error naming each place that is not.
func Validate(log []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// Check fails the test when log is not a SARIF 2.1.0 log by the schema.
func Check(t testing.TB, log []byte) {
	t.Helper()
	if err := Validate(log); err != nil {
		t.Errorf("the log is not SARIF 2.1.0 by its schema: %v", err)
	}
}
