package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Limits of the format (CloudWatch's EMF specification).
const (
	MaxMetrics    = 100 // metric definitions a directive
	MaxDimensions = 30  // dimension keys a dimension set
	MaxValues     = 100 // values of one metric in an array
)

// units are the units a metric definition may name.
var units = []string{"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second", "Kilobytes/Second",
	"Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second", "Kilobits/Second", "Megabits/Second",
	"Gigabits/Second", "Terabits/Second", "Count/Second", "None"}

// IsEMF reports whether a log line claims to be an EMF document: a JSON
// object with an _aws member.
func IsEMF(line []byte) bool {
	return bytes.Contains(line, []byte(`"_aws"`))
}

// Check checks one log line that carries an _aws member against the
// format's rules: _aws an object with Timestamp in milliseconds since the
// epoch and CloudWatchMetrics an array of directives; each directive a
// namespace, dimension sets of at most 30 keys each naming a string member
// of the root, and at most 100 metric definitions each naming a number (or
// an array of at most 100 numbers) at the root, with a known unit.
func Check(line []byte) error {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	raw, ok := root["_aws"]
	if !ok {
		return fmt.Errorf("no _aws member")
	}
	var aws struct {
		Timestamp         *json.Number      `json:"Timestamp"`
		CloudWatchMetrics []json.RawMessage `json:"CloudWatchMetrics"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&aws); err != nil {
		return fmt.Errorf("_aws: %w", err)
	}
	if aws.Timestamp == nil {
		return fmt.Errorf("_aws has no Timestamp")
	}
	ts, err := aws.Timestamp.Int64()
	// Milliseconds of 2001 to 5138: seconds or nanoseconds fall outside.
	if err != nil || ts < 1e12 || ts >= 1e14 {
		return fmt.Errorf("_aws.Timestamp %s is not milliseconds since the epoch", aws.Timestamp)
	}
	if aws.CloudWatchMetrics == nil {
		return fmt.Errorf("_aws has no CloudWatchMetrics array")
	}
	for i, rawD := range aws.CloudWatchMetrics {
		if err := checkDirective(root, rawD); err != nil {
			return fmt.Errorf("directive %d: %w", i, err)
		}
	}
	return nil
}

// checkedDirective is one member of _aws.CloudWatchMetrics as Check reads it.
type checkedDirective struct {
	Namespace  *string    `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []struct {
		Name              *string `json:"Name"`
		Unit              *string `json:"Unit"`
		StorageResolution *int    `json:"StorageResolution"`
	} `json:"Metrics"`
}

// checkDirective checks one directive against the line's root members.
func checkDirective(root map[string]json.RawMessage, raw json.RawMessage) error {
	var d checkedDirective
	if err := json.Unmarshal(raw, &d); err != nil {
		return err
	}
	if d.Namespace == nil || *d.Namespace == "" || len(*d.Namespace) > 1024 {
		return fmt.Errorf("the Namespace must be 1 to 1024 characters")
	}
	if d.Dimensions == nil {
		return fmt.Errorf("no Dimensions array")
	}
	if err := checkDimensions(root, d.Dimensions); err != nil {
		return err
	}
	if len(d.Metrics) == 0 || len(d.Metrics) > MaxMetrics {
		return fmt.Errorf("%d metrics (1 to %d)", len(d.Metrics), MaxMetrics)
	}
	for _, m := range d.Metrics {
		if m.Name == nil || *m.Name == "" || len(*m.Name) > 1024 {
			return fmt.Errorf("a metric without a Name of 1 to 1024 characters")
		}
		if m.Unit != nil && !slices.Contains(units, *m.Unit) {
			return fmt.Errorf("metric %s: unit %q is not a CloudWatch unit", *m.Name, *m.Unit)
		}
		if m.StorageResolution != nil && *m.StorageResolution != 1 && *m.StorageResolution != 60 {
			return fmt.Errorf("metric %s: StorageResolution %d is neither 1 nor 60", *m.Name, *m.StorageResolution)
		}
		if err := checkValue(root[*m.Name]); err != nil {
			return fmt.Errorf("metric %s: %w", *m.Name, err)
		}
	}
	return nil
}

// checkDimensions checks dimension sets: at most MaxDimensions keys each,
// every key a string member of the root.
func checkDimensions(root map[string]json.RawMessage, sets [][]string) error {
	for _, set := range sets {
		if len(set) > MaxDimensions {
			return fmt.Errorf("a dimension set of %d keys (at most %d)", len(set), MaxDimensions)
		}
		for _, k := range set {
			var s string
			if v, ok := root[k]; !ok || isNull(v) || json.Unmarshal(v, &s) != nil {
				return fmt.Errorf("dimension %q is not a string member of the root", k)
			}
		}
	}
	return nil
}

// checkValue checks a metric's value at the root: a number, or an array
// of at most MaxValues numbers.
func checkValue(v json.RawMessage) error {
	if v == nil || isNull(v) {
		return fmt.Errorf("not present at the root")
	}
	var n float64
	if json.Unmarshal(v, &n) == nil {
		return nil
	}
	var ns []float64
	if json.Unmarshal(v, &ns) != nil {
		return fmt.Errorf("value %s is not a number or an array of numbers", v)
	}
	if len(ns) > MaxValues {
		return fmt.Errorf("%d values (at most %d)", len(ns), MaxValues)
	}
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }
