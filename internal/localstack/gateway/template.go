// Package gateway stands in for API Gateway locally: it reads the routes,
// the authorizer wiring and the gateway responses from template.yaml, builds
// REST proxy events like API Gateway's, runs the TOKEN authorizer with its
// cache, evaluates the policy it returns, and shapes gateway-made errors like
// the deployed GatewayResponses.
package gateway

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Route is one API event of a function.
type Route struct {
	Method   string // upper case
	Path     string // as in the template: /api/users/{user_id}
	Function string // logical id of the function
	Auth     bool   // false when the event sets Auth.Authorizer: NONE
}

// S3Event is one S3 event of a function: the bucket's logical id, the
// event types (s3:ObjectCreated:*) and the key prefix of its filter.
type S3Event struct {
	Function string
	Bucket   string
	Events   []string
	Prefix   string
}

// QueueEvent is one SQS event of a function: the queue's logical id, the
// most messages a batch holds (BatchSize, 10 when absent) and the most
// batches delivered at once (ScalingConfig's MaximumConcurrency; 5 when
// absent, as many as Lambda starts polling with).
type QueueEvent struct {
	Function    string
	Queue       string
	BatchSize   int
	Concurrency int
}

// Queue is an AWS::SQS::Queue of the template: the logical id of its
// dead-letter queue and how many receives move a message there
// (RedrivePolicy's deadLetterTargetArn and maxReceiveCount), when it has
// one.
type Queue struct {
	DeadLetter string
	MaxReceive int
}

// StreamEvent is one DynamoDB stream event of a function: the table's
// logical id, the most records a batch holds (BatchSize, 100 when absent)
// and the patterns of its FilterCriteria.
type StreamEvent struct {
	Function  string
	Table     string
	BatchSize int
	Filters   []string
}

// Authorizer is the TOKEN authorizer of the API.
type Authorizer struct {
	Function string // logical id
	Header   string
	TTL      int // seconds the answer is cached; 0 turns the cache off
	// Validation is the identity validation expression: a header that does
	// not match it is refused (401) without running the authorizer.
	Validation *regexp.Regexp
}

// Response is one GatewayResponse.
type Response struct {
	Status   int
	Headers  map[string]string
	Template string
}

// Template is what the local server needs from template.yaml.
type Template struct {
	Stage      string
	Routes     []Route
	Authorizer *Authorizer
	Responses  map[string]Response
	Functions  []string // logical ids of every function
	// S3Events are the functions' S3 triggers, which the local stack
	// delivers itself.
	S3Events []S3Event
	// Schedules are the functions that EventBridge schedules invoke, with
	// their schedule expression (rate(1 minute)).
	Schedules map[string]string
	// QueueEvents are the functions' SQS triggers; Queues the queues, by
	// logical id.
	QueueEvents []QueueEvent
	Queues      map[string]Queue
	// StreamEvents are the functions' DynamoDB stream triggers.
	StreamEvents []StreamEvent
	// CustomResources are the functions that CloudFormation custom
	// resources invoke (their ServiceToken), with the resource's logical
	// id; CloudFormation alone invokes them, so the local stack does not.
	CustomResources map[string]string
	// Collections are the paths also served with a trailing slash
	// (docs/API.md, Routes): see collections.
	Collections map[string]bool
}

// ReadTemplate reads a SAM template file.
func ReadTemplate(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	t, err := ParseTemplate(b)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return t, nil
}

// node is a YAML node with the helpers that reading a template needs.
type node struct {
	*yaml.Node
	params map[string]string
}

func (n node) get(path ...string) node {
	cur := n.Node
	for _, k := range path {
		if cur == nil || cur.Kind != yaml.MappingNode {
			return node{nil, n.params}
		}
		var next *yaml.Node
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				next = cur.Content[i+1]
			}
		}
		cur = next
	}
	return node{cur, n.params}
}

// entries returns the keys and values of a mapping, in order.
func (n node) entries() ([]string, []node) {
	if n.Node == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	var keys []string
	var vals []node
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
		vals = append(vals, node{n.Content[i+1], n.params})
	}
	return keys, vals
}

// str resolves a scalar, including the short-form intrinsics !Ref (to a
// parameter's default or a logical id), !GetAtt (to the logical id) and !Sub
// (parameters substituted).
func (n node) str() string {
	if n.Node == nil {
		return ""
	}
	v := n.Value
	switch n.Tag {
	case "!Ref":
		if p, ok := n.params[v]; ok {
			return p
		}
		return v
	case "!GetAtt":
		if n.Kind == yaml.SequenceNode && len(n.Content) > 0 {
			return n.Content[0].Value
		}
		id, _, _ := strings.Cut(v, ".")
		return id
	case "!Sub":
		for k, p := range n.params {
			v = strings.ReplaceAll(v, "${"+k+"}", p)
		}
		return v
	}
	if ref := n.get("Ref"); ref.Node != nil {
		return node{&yaml.Node{Kind: yaml.ScalarNode, Tag: "!Ref", Value: ref.Value}, n.params}.str()
	}
	if att := n.get("Fn::GetAtt"); att.Node != nil {
		return node{&yaml.Node{Kind: att.Kind, Tag: "!GetAtt", Value: att.Value, Content: att.Content}, n.params}.str()
	}
	return v
}

// ParseTemplate reads the routes, authorizer and gateway responses of a
// SAM template whose API is one AWS::Serverless::Api.
func ParseTemplate(b []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty template")
	}
	root := node{doc.Content[0], map[string]string{}}
	names, params := root.get("Parameters").entries()
	for i, name := range names {
		root.params[name] = params[i].get("Default").str()
	}
	t := &Template{Responses: map[string]Response{}, Schedules: map[string]string{}, Queues: map[string]Queue{}, CustomResources: map[string]string{}}
	ids, resources := root.get("Resources").entries()
	for i, id := range ids {
		r := resources[i]
		if typ := r.get("Type").str(); strings.HasPrefix(typ, "Custom::") || typ == "AWS::CloudFormation::CustomResource" {
			t.CustomResources[r.get("Properties", "ServiceToken").str()] = id
		}
		switch r.get("Type").str() {
		case "AWS::Serverless::Api":
			if err := t.readAPI(r.get("Properties")); err != nil {
				return nil, fmt.Errorf("api %s: %w", id, err)
			}
		case "AWS::SQS::Queue":
			rp := r.get("Properties", "RedrivePolicy")
			n, _ := strconv.Atoi(rp.get("maxReceiveCount").str())
			t.Queues[id] = Queue{DeadLetter: rp.get("deadLetterTargetArn").str(), MaxReceive: n}
		case "AWS::Serverless::Function":
			t.Functions = append(t.Functions, id)
			_, events := r.get("Properties", "Events").entries()
			for _, ev := range events {
				t.readEvent(id, ev.get("Type").str(), ev.get("Properties"))
			}
		}
	}
	if t.Authorizer == nil {
		return nil, fmt.Errorf("no AWS::Serverless::Api with a default TOKEN authorizer")
	}
	sort.Slice(t.Routes, func(i, j int) bool {
		return t.Routes[i].Path+" "+t.Routes[i].Method < t.Routes[j].Path+" "+t.Routes[j].Method
	})
	t.Collections = collections(t.Routes)
	return t, nil
}

// readEvent reads one event of a function: an API route, an S3, schedule,
// SQS or DynamoDB stream trigger.
func (t *Template) readEvent(function, typ string, p node) {
	switch typ {
	case "Api":
		t.Routes = append(t.Routes, Route{
			Method:   strings.ToUpper(p.get("Method").str()),
			Path:     p.get("Path").str(),
			Function: function,
			Auth:     p.get("Auth", "Authorizer").str() != "NONE",
		})
	case "S3":
		t.S3Events = append(t.S3Events, readS3Event(function, p))
	case "Schedule":
		t.Schedules[function] = p.get("Schedule").str()
	case "SQS":
		t.QueueEvents = append(t.QueueEvents, QueueEvent{Function: function, Queue: p.get("Queue").str(), BatchSize: p.get("BatchSize").integer(10),
			Concurrency: p.get("ScalingConfig", "MaximumConcurrency").integer(5)})
	case "DynamoDB":
		ev := StreamEvent{Function: function, Table: p.get("Stream").str(), BatchSize: p.get("BatchSize").integer(100)}
		if fs := p.get("FilterCriteria", "Filters"); fs.Node != nil && fs.Kind == yaml.SequenceNode {
			for _, f := range fs.Content {
				ev.Filters = append(ev.Filters, node{f, p.params}.get("Pattern").str())
			}
		}
		t.StreamEvents = append(t.StreamEvents, ev)
	}
}

// integer reads a scalar as an integer, def when it is absent or not one.
func (n node) integer(def int) int {
	if v, err := strconv.Atoi(n.str()); err == nil {
		return v
	}
	return def
}

// readS3Event reads the properties of a function's S3 event.
func readS3Event(function string, p node) S3Event {
	ev := S3Event{Function: function, Bucket: p.get("Bucket").str()}
	if e := p.get("Events"); e.Node != nil && e.Kind == yaml.SequenceNode {
		for _, v := range e.Content {
			ev.Events = append(ev.Events, v.Value)
		}
	} else if s := e.str(); s != "" {
		ev.Events = []string{s}
	}
	if rules := p.get("Filter", "S3Key", "Rules"); rules.Node != nil && rules.Kind == yaml.SequenceNode {
		for _, r := range rules.Content {
			rule := node{r, p.params}
			if strings.EqualFold(rule.get("Name").str(), "prefix") {
				ev.Prefix = rule.get("Value").str()
			}
		}
	}
	return ev
}

// specIDs are the path parameters of the spec's own resources
// (docs/API.md, The specified interface): their collections are the
// paths served with a trailing slash too.
var specIDs = map[string]bool{"{user_id}": true, "{pr_scan_id}": true, "{whitelist_id}": true}

// collections returns the collection paths of the spec's resources: a
// path without parameters that takes a POST (it creates) and whose items,
// named by one of the spec's ids, have routes of their own. The spec's
// sample request for Create New User ends in a slash, so these are served
// with one too; no later collection (tokens, uploads) is (docs/DECISIONS.md).
func collections(routes []Route) map[string]bool {
	items := map[string]bool{}
	for _, r := range routes {
		i := strings.LastIndex(r.Path, "/")
		if parent := r.Path[:max(i, 0)]; i >= 0 && specIDs[r.Path[i+1:]] && !strings.Contains(parent, "{") {
			items[parent] = true
		}
	}
	out := map[string]bool{}
	for _, r := range routes {
		if r.Method == "POST" && items[r.Path] {
			out[r.Path] = true
		}
	}
	return out
}

func (t *Template) readAPI(p node) error {
	t.Stage = p.get("StageName").str()
	def := p.get("Auth", "DefaultAuthorizer").str()
	a := p.get("Auth", "Authorizers", def)
	if def == "" || a.Node == nil {
		return fmt.Errorf("no default authorizer")
	}
	ttl := 300
	if s := a.get("Identity", "ReauthorizeEvery").str(); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("authorizer cache TTL %q: %w", s, err)
		}
		ttl = n
	}
	t.Authorizer = &Authorizer{Function: a.get("FunctionArn").str(), Header: a.get("Identity", "Header").str(), TTL: ttl}
	if expr := a.get("Identity", "ValidationExpression").str(); expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			return fmt.Errorf("authorizer validation expression %q: %w", expr, err)
		}
		t.Authorizer.Validation = re
	}
	if t.Authorizer.Header == "" {
		t.Authorizer.Header = "Authorization"
	}
	types, resps := p.get("GatewayResponses").entries()
	for i, typ := range types {
		r := resps[i]
		gr := Response{Headers: map[string]string{}, Template: r.get("ResponseTemplates", "application/json").str()}
		if s := r.get("StatusCode").str(); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("gateway response %s status %q: %w", typ, s, err)
			}
			gr.Status = n
		}
		names, vals := r.get("ResponseParameters", "Headers").entries()
		for j, h := range names {
			// A value the local server cannot resolve (an !If on a
			// condition, such as the dashboard's origin) is left out.
			if v := strings.TrimSuffix(strings.TrimPrefix(vals[j].str(), "'"), "'"); v != "" {
				gr.Headers[h] = v
			}
		}
		t.Responses[typ] = gr
	}
	return nil
}

// Triggers names what invokes a function in the template, each kind once,
// as internal/ops names an operation's kind: "API" (its routes), "Authorizer",
// "S3", "Schedule", "Queue" (SQS), "Stream" (DynamoDB) and
// "CustomResource" (the ServiceToken of a CloudFormation custom resource).
func (t *Template) Triggers(function string) []string {
	var kinds []string
	add := func(kind string, ok bool) {
		if ok && !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	for _, r := range t.Routes {
		add("API", r.Function == function)
	}
	add("Authorizer", t.Authorizer != nil && t.Authorizer.Function == function)
	for _, ev := range t.S3Events {
		add("S3", ev.Function == function)
	}
	add("Schedule", t.Schedules[function] != "")
	for _, ev := range t.QueueEvents {
		add("Queue", ev.Function == function)
	}
	for _, ev := range t.StreamEvents {
		add("Stream", ev.Function == function)
	}
	add("CustomResource", t.CustomResources[function] != "")
	return kinds
}
