package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/metrics"
)

// TestEmitWritesEMF: an emitted line is one JSON object that the format's
// rules accept, with the metrics as numbers and the dimensions as strings
// at its root, under the scangate namespace.
func TestEmitWritesEMF(t *testing.T) {
	var buf bytes.Buffer
	m := metrics.New(slog.New(slog.NewJSONHandler(&buf, nil)))
	m.Emit(context.Background(), []metrics.Dim{{Name: metrics.DimRoute, Value: "/api/users/{id}"}, {Name: metrics.DimStatusClass, Value: "2xx"}},
		metrics.CountOf(metrics.Requests, 1), metrics.Millis(metrics.Latency, 1500*time.Microsecond))
	line := bytes.TrimSpace(buf.Bytes())
	if err := metrics.Check(line); err != nil {
		t.Fatalf("%v\n%s", err, line)
	}
	var got struct {
		Aws struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		Route, StatusClass string
		Requests, Latency  float64
		Level              string `json:"level"`
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	d := got.Aws.CloudWatchMetrics[0]
	if d.Namespace != "scangate" || fmt.Sprint(d.Dimensions) != "[[Route StatusClass] [StatusClass] []]" || len(d.Metrics) != 2 ||
		d.Metrics[1].Unit != "Milliseconds" || got.Route != "/api/users/{id}" || got.StatusClass != "2xx" ||
		got.Requests != 1 || got.Latency != 1.5 || got.Level != metrics.Level.String() {
		t.Errorf("%+v\n%s", got, line)
	}
	if age := time.Since(time.UnixMilli(got.Aws.Timestamp)); age < 0 || age > time.Minute {
		t.Errorf("Timestamp %d is not now in milliseconds", got.Aws.Timestamp)
	}
	var nothing *metrics.Emitter
	nothing.Emit(context.Background(), nil, metrics.CountOf(metrics.Requests, 1)) // no panic, no line
}

// TestCheckRefuses: every rule of the format Check enforces refuses a line
// that breaks it.
func TestCheckRefuses(t *testing.T) {
	ok := `{"_aws":{"Timestamp":1764370000000,"CloudWatchMetrics":[{"Namespace":"scangate","Dimensions":[["Route"]],"Metrics":[{"Name":"Requests","Unit":"Count"}]}]},"Route":"/api/me","Requests":1}`
	if err := metrics.Check([]byte(ok)); err != nil {
		t.Fatalf("a valid line: %v", err)
	}
	many := func(n int, f func(i int) string) string {
		var s []string
		for i := range n {
			s = append(s, f(i))
		}
		return strings.Join(s, ",")
	}
	for name, line := range map[string]string{
		"not JSON":           `_aws`,
		"no _aws":            `{"Requests":1}`,
		"seconds":            strings.Replace(ok, "1764370000000", "1764370000", 1),
		"nanoseconds":        strings.Replace(ok, "1764370000000", "1764370000000000000", 1),
		"no timestamp":       strings.Replace(ok, `"Timestamp":1764370000000,`, "", 1),
		"no directives":      `{"_aws":{"Timestamp":1764370000000},"Requests":1}`,
		"no namespace":       strings.Replace(ok, `"Namespace":"scangate",`, "", 1),
		"metric absent":      strings.Replace(ok, `,"Requests":1`, "", 1),
		"metric a string":    strings.Replace(ok, `"Requests":1`, `"Requests":"1"`, 1),
		"metric null":        strings.Replace(ok, `"Requests":1`, `"Requests":null`, 1),
		"dimension absent":   strings.Replace(ok, `"Route":"/api/me",`, "", 1),
		"dimension a number": strings.Replace(ok, `"Route":"/api/me"`, `"Route":7`, 1),
		"bad unit":           strings.Replace(ok, `"Count"`, `"Things"`, 1),
		"no metrics":         strings.Replace(ok, `{"Name":"Requests","Unit":"Count"}`, "", 1),
		"101 metrics": `{"_aws":{"Timestamp":1764370000000,"CloudWatchMetrics":[{"Namespace":"scangate","Dimensions":[],"Metrics":[` +
			many(101, func(i int) string { return fmt.Sprintf(`{"Name":"m%d"}`, i) }) + `]}]},` + many(101, func(i int) string { return fmt.Sprintf(`"m%d":1`, i) }) + `}`,
		"31 dimensions": `{"_aws":{"Timestamp":1764370000000,"CloudWatchMetrics":[{"Namespace":"scangate","Dimensions":[[` +
			many(31, func(i int) string { return fmt.Sprintf(`"d%d"`, i) }) + `]],"Metrics":[{"Name":"m"}]}]},"m":1,` + many(31, func(i int) string { return fmt.Sprintf(`"d%d":"v"`, i) }) + `}`,
	} {
		if err := metrics.Check([]byte(line)); err == nil {
			t.Errorf("%s: accepted %s", name, line)
		}
	}
}

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{200: "2xx", 204: "2xx", 404: "4xx", 422: "4xx", 499: "4xx", 503: "5xx", 0: "other"} {
		if got := metrics.StatusClass(status); got != want {
			t.Errorf("%d: %s, want %s", status, got, want)
		}
	}
}
