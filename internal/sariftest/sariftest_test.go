package sariftest

import "testing"

// TestValidate: the schema takes a minimal log and refuses what SARIF
// 2.1.0 does not allow.
func TestValidate(t *testing.T) {
	ok := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"error",` +
		`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/a%20b.go"}}}],"baselineState":"absent",` +
		`"suppressions":[{"kind":"external","justification":"j"}]}]}]}`
	if err := Validate([]byte(ok)); err != nil {
		t.Errorf("a minimal log: %v", err)
	}
	for name, log := range map[string]string{
		"another version":   `{"version":"2.0.0","runs":[]}`,
		"no runs":           `{"version":"2.1.0"}`,
		"a level":           `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`,
		"a baseline state":  `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"baselineState":"gone"}]}]}`,
		"no message":        `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{}]}]}`,
		"a suppression":     `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"suppressions":[{"kind":"allowlist"}]}]}]}`,
		"not a uri":         `{"$schema":"sarif.json","version":"2.1.0","runs":[]}`,
		"a line below 1":    `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":0}}}]}]}]}`,
		"an unknown member": `{"version":"2.1.0","runs":[],"extra":1}`,
	} {
		if Validate([]byte(log)) == nil {
			t.Errorf("%s: the schema takes %s", name, log)
		}
	}
}
