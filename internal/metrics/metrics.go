// Package metrics writes CloudWatch metrics in the Embedded Metric Format
// (EMF): one JSON log line whose _aws member tells CloudWatch Logs which of
// the line's other members are metrics, under which dimensions. The
// functions' own JSON logger writes the lines, so a metric costs no call to
// CloudWatch and nothing at init. No maintained Go EMF library exists; the
// format is small (docs/DECISIONS.md).
package metrics

import (
	"context"
	"log/slog"
	"math"
	"time"
)

// Namespace is the CloudWatch namespace of every scangate metric.
const Namespace = "scangate"

// Level is the level of metric lines: above ERROR, so that no LOG_LEVEL
// drops them (a quieter log must not blind the alarms); the logger of
// internal/config writes it as "METRIC".
const Level = slog.LevelError + 4

// Units of the metrics scangate emits (CloudWatch's StandardUnit names).
const (
	Count        = "Count"
	Milliseconds = "Milliseconds"
	Seconds      = "Seconds"
)

// The names of the metrics scangate emits, and of their dimensions. The
// template's alarms and dashboard name these (a test checks every alarm on
// the scangate namespace names one of Names).
const (
	Requests         = "Requests"          // API requests answered (Route, StatusClass)
	Latency          = "Latency"           // API request latency, ms (Route)
	GateDecisions    = "GateDecisions"     // gates written (Cause, Blocked)
	ScansRecorded    = "ScansRecorded"     // scans recorded
	FindingsRecorded = "FindingsRecorded"  // findings of the scans recorded
	NewFindings      = "NewFindings"       // findings of the PR scans recorded that their baseline lacks
	WorkPending      = "WorkPending"       // durable work items not done (Kind)
	WorkOldestAge    = "WorkOldestAge"     // age of the oldest pending work item, s (Kind)
	Deliveries       = "Deliveries"        // webhook delivery attempts by outcome (Outcome)
	DeliveryLatency  = "DeliveryLatency"   // from the event to its delivery, ms
	AuthorizerDenied = "AuthorizerDenied"  // requests the authorizer refused (Cause)
	DynamoDBThrottle = "DynamoDBThrottles" // throttled DynamoDB attempts the SDK saw (Operation)

	DimRoute       = "Route"
	DimStatusClass = "StatusClass"
	DimCause       = "Cause"
	DimBlocked     = "Blocked"
	DimKind        = "Kind"
	DimOutcome     = "Outcome"
	DimOperation   = "Operation"
)

// Names are the metrics the code emits.
var Names = []string{Requests, Latency, GateDecisions, ScansRecorded, FindingsRecorded, NewFindings, WorkPending, WorkOldestAge,
	Deliveries, DeliveryLatency, AuthorizerDenied, DynamoDBThrottle}

// Metric is one value of a metric.
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// Dim is one dimension of the metrics of a line: low cardinality only
// (a route template, a status class, a cause), never an id.
type Dim struct{ Name, Value string }

// Emitter writes metrics through a logger. A nil Emitter (or one of a nil
// logger) emits nothing, so code that may run without metrics needs no
// check.
type Emitter struct {
	log *slog.Logger
	now func() time.Time
}

// New is the emitter writing through log.
func New(log *slog.Logger) *Emitter {
	if log == nil {
		return nil
	}
	return &Emitter{log: log, now: time.Now}
}

// directive is one member of _aws.CloudWatchMetrics.
type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

type metricDef struct {
	Name string `json:"Name"`
	Unit string `json:"Unit,omitempty"`
}

type awsMember struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// Emit writes one EMF line: the metrics ms under the dimension set dims,
// under its last dimension alone, and under none (the namespace's totals,
// which alarms watch). A value that is not a finite
// number is left out (JSON has none such).
func (e *Emitter) Emit(ctx context.Context, dims []Dim, ms ...Metric) {
	if e == nil || e.log == nil {
		return
	}
	d := directive{Namespace: Namespace, Dimensions: [][]string{make([]string, 0, len(dims))}}
	attrs := make([]slog.Attr, 0, 1+len(dims)+len(ms))
	attrs = append(attrs, slog.Attr{}) // _aws, below
	for _, dim := range dims {
		d.Dimensions[0] = append(d.Dimensions[0], dim.Name)
		attrs = append(attrs, slog.String(dim.Name, dim.Value))
	}
	for _, m := range ms {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		d.Metrics = append(d.Metrics, metricDef{Name: m.Name, Unit: m.Unit})
		attrs = append(attrs, slog.Float64(m.Name, m.Value))
	}
	if len(d.Metrics) == 0 {
		return
	}
	if len(dims) > 1 {
		// The last dimension alone (a status class, a decision): what the
		// operations dashboard graphs.
		d.Dimensions = append(d.Dimensions, []string{dims[len(dims)-1].Name})
	}
	if len(dims) > 0 {
		// The totals too, under no dimension: what the template's alarms
		// watch (an alarm names one dimension set exactly).
		d.Dimensions = append(d.Dimensions, []string{})
	}
	attrs[0] = slog.Any("_aws", awsMember{Timestamp: e.now().UnixMilli(), CloudWatchMetrics: []directive{d}})
	e.log.LogAttrs(ctx, Level, logMessage, attrs...)
}

// CountOf is a metric counting n.
func CountOf(name string, n int) Metric { return Metric{Name: name, Unit: Count, Value: float64(n)} }

// Millis is a metric of a duration in milliseconds.
func Millis(name string, d time.Duration) Metric {
	return Metric{Name: name, Unit: Milliseconds, Value: float64(d.Microseconds()) / 1000}
}

// StatusClass is the class of an HTTP status: "2xx" to "5xx".
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return string(rune('0'+status/100)) + "xx"
}

// logMessage is the msg of every metric line.
const logMessage = "metrics"
