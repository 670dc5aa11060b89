package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Stream is the table's DynamoDB stream as the local stack runs it for one
// function (a DynamoDB event of the template): the writes made through the
// stack's store, in the order they returned, as stream records (a put is
// an INSERT with its new image; an update a MODIFY and a delete a REMOVE,
// with their keys only), kept when the event's FilterCriteria match them,
// and delivered one batch of at most BatchSize records at a time (an
// events.DynamoDBEvent). A partial batch response
// (events.DynamoDBEventResponse) makes the next batch start at the first
// record it names; a failed invocation retries its batch after the retry
// delay. A store of Options.StoreFor is seen when its client takes the
// option StoreFor is given.
type Stream struct {
	Function string

	consumer func(ctx context.Context, event []byte) ([]byte, error)
	filters  []map[string]any
	batch    int
	retry    time.Duration
	log      *slog.Logger

	watch   // guards and signals what follows
	seq     int64
	records []events.DynamoDBEventRecord // not yet delivered, oldest first
	busy    bool                         // a batch is being delivered
	held    bool                         // Hold: no batch starts
}

// Hold stops the stream from starting a batch until release is called,
// so that a test can have records arrive together (one batch).
func (s *Stream) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.held = false
		s.notify()
	}
}

func newStream(function string, filters []string) (*Stream, error) {
	s := &Stream{Function: function, watch: newWatch()}
	for _, f := range filters {
		var p map[string]any
		if err := json.Unmarshal([]byte(f), &p); err != nil {
			return nil, fmt.Errorf("stream filter of %s: %w", function, err)
		}
		if err := checkPattern(p); err != nil {
			return nil, fmt.Errorf("stream filter of %s: %w", function, err)
		}
		s.filters = append(s.filters, p)
	}
	return s, nil
}

// Publish adds records (their sequence numbers are given here) that the
// stream's filters keep.
func (s *Stream) Publish(records ...events.DynamoDBEventRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range records {
		if !s.keeps(r) {
			continue
		}
		s.seq++
		r.Change.SequenceNumber = fmt.Sprintf("%021d", s.seq)
		r.EventID = strconv.FormatInt(s.seq, 10)
		s.records = append(s.records, r)
	}
	s.notify()
}

// keeps reports whether a record passes the filters (any one; all when
// there are none), matched against its JSON as Lambda matches it.
func (s *Stream) keeps(r events.DynamoDBEventRecord) bool {
	if len(s.filters) == 0 {
		return true
	}
	b, _ := json.Marshal(r)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	for _, p := range s.filters {
		if matches(p, doc) {
			return true
		}
	}
	return false
}

// Idle waits until every record published has been delivered, or ctx ends.
func (s *Stream) Idle(ctx context.Context) error {
	return s.until(ctx, func() bool { return len(s.records) == 0 && !s.busy })
}

// run delivers batches until ctx ends.
func (s *Stream) run(ctx context.Context) {
	for {
		if s.until(ctx, func() bool { return len(s.records) > 0 && !s.held }) != nil {
			return
		}
		s.mu.Lock()
		batch := s.records[:min(len(s.records), s.batch)]
		s.busy = true
		s.mu.Unlock()
		done := s.deliver(ctx, batch)
		if done < len(batch) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.retry):
			}
		}
		s.mu.Lock()
		s.records, s.busy = s.records[done:], false
		s.notify()
		s.mu.Unlock()
	}
}

// deliver invokes the consumer with a batch and returns how many of its
// records are done: all, none (a failed invocation), or those before the
// first failure its response names.
func (s *Stream) deliver(ctx context.Context, batch []events.DynamoDBEventRecord) int {
	b, _ := json.Marshal(events.DynamoDBEvent{Records: batch})
	out, err := s.consumer(ctx, b)
	if err != nil {
		s.log.ErrorContext(ctx, "stream batch invocation failed", "function", s.Function, "records", len(batch), "error", err.Error())
		return 0
	}
	var resp events.DynamoDBEventResponse
	if len(out) > 0 && string(out) != "null" {
		if err := json.Unmarshal(out, &resp); err != nil {
			s.log.ErrorContext(ctx, "stream batch response unreadable", "function", s.Function, "error", err.Error())
			return 0
		}
	}
	done := len(batch)
	for _, f := range resp.BatchItemFailures {
		i := -1
		for j, r := range batch {
			if r.Change.SequenceNumber == f.ItemIdentifier {
				i = j
			}
		}
		if i < 0 { // as Lambda: an unknown identifier fails the whole batch
			return 0
		}
		done = min(done, i)
	}
	return done
}

// watch is a mutex and a channel closed at every change of what the mutex
// guards, for the goroutines that wait for one (a queue's or a stream's
// loop, Idle).
type watch struct {
	mu      sync.Mutex
	changed chan struct{}
}

func newWatch() watch { return watch{changed: make(chan struct{})} }

// notify wakes the goroutines that wait for a change; mu is held.
func (w *watch) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// until waits until cond, called with mu held, is true, or ctx ends.
func (w *watch) until(ctx context.Context, cond func() bool) error {
	for {
		w.mu.Lock()
		ok, changed := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// captureWrites is middleware for the stack's DynamoDB client: after each
// write that succeeded it publishes the write's stream records to streams.
func captureWrites(streams []*Stream) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("localStream",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					if recs := streamRecords(in.Parameters); len(recs) > 0 {
						for _, s := range streams {
							s.Publish(recs...)
						}
					}
				}
				return out, md, err
			}), middleware.After)
	}
}

// streamRecords are the stream records of a write's input.
func streamRecords(input any) []events.DynamoDBEventRecord {
	var out []events.DynamoDBEventRecord
	add := func(name string, keys, image map[string]types.AttributeValue) {
		r := events.DynamoDBEventRecord{EventName: name, EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: region,
			Change: events.DynamoDBStreamRecord{ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()},
				StreamViewType: "NEW_IMAGE"}}
		r.Change.Keys = map[string]events.DynamoDBAttributeValue{"PK": streamValue(keys["PK"]), "SK": streamValue(keys["SK"])}
		if image != nil {
			r.Change.NewImage = streamImage(image)
		}
		out = append(out, r)
	}
	switch in := input.(type) {
	case *dynamodb.PutItemInput:
		add("INSERT", in.Item, in.Item)
	case *dynamodb.UpdateItemInput:
		add("MODIFY", in.Key, nil)
	case *dynamodb.DeleteItemInput:
		add("REMOVE", in.Key, nil)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				if r.PutRequest != nil {
					add("INSERT", r.PutRequest.Item, r.PutRequest.Item)
				} else if r.DeleteRequest != nil {
					add("REMOVE", r.DeleteRequest.Key, nil)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				add("INSERT", it.Put.Item, it.Put.Item)
			case it.Update != nil:
				add("MODIFY", it.Update.Key, nil)
			case it.Delete != nil:
				add("REMOVE", it.Delete.Key, nil)
			}
		}
	}
	return out
}

func streamImage(item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		out[k] = streamValue(v)
	}
	return out
}

// streamValue is an attribute value as a stream record carries it.
func streamValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(streamImage(v.Value))
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = streamValue(e)
		}
		return events.NewListAttribute(l)
	}
	return events.NewNullAttribute()
}

// checkPattern refuses the parts of Lambda's filter patterns that the
// local stream does not match: it matches nested objects, and arrays of
// literal values, {"prefix": "..."} and {"exists": true|false}.
func checkPattern(p map[string]any) error {
	for k, v := range p {
		switch v := v.(type) {
		case map[string]any:
			if err := checkPattern(v); err != nil {
				return err
			}
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					for op := range m {
						if op != "prefix" && op != "exists" {
							return fmt.Errorf("%s: the local stream does not match %q", k, op)
						}
					}
				}
			}
		default:
			return fmt.Errorf("%s: a pattern's values are objects or arrays", k)
		}
	}
	return nil
}

// matches reports whether doc matches the pattern p (checkPattern's subset
// of Lambda's filter rules).
func matches(p map[string]any, doc map[string]any) bool {
	for k, v := range p {
		val, present := doc[k]
		switch v := v.(type) {
		case map[string]any:
			sub, ok := val.(map[string]any)
			if !ok || !matches(v, sub) {
				return false
			}
		case []any:
			if !matchesAny(v, val, present) {
				return false
			}
		}
	}
	return true
}

func matchesAny(alternatives []any, val any, present bool) bool {
	for _, a := range alternatives {
		m, isOp := a.(map[string]any)
		switch {
		case !isOp && present && fmt.Sprint(a) == fmt.Sprint(val):
			return true
		case isOp && m["exists"] != nil:
			if m["exists"] == present {
				return true
			}
		case isOp && m["prefix"] != nil:
			if s, ok := val.(string); ok && strings.HasPrefix(s, fmt.Sprint(m["prefix"])) {
				return true
			}
		}
	}
	return false
}
