package ddbtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/scangate/scangate/internal/store"
)

// Lag simulates the eventual consistency of DynamoDB's global secondary
// indexes, which the embedded server and DynamoDB Local do not show (they
// update indexes synchronously): a query of an index answers as the index
// was Delay ago. An item written within the delay is hidden if it did not
// exist before, and served in its earlier version if it did. It sees the
// writes made through the client it is installed on.
type Lag struct {
	Delay time.Duration
	raw   *dynamodb.Client // reads the images before writes
	table string

	mu      sync.Mutex
	history map[string][]write // by key, oldest first
}

// write is one successful write of a key: when, and the item before it.
type write struct {
	at     time.Time
	before map[string]types.AttributeValue // nil: the item did not exist
}

// Lagged returns a store on the same table whose client sees the index
// with the given lag, and the Lag itself.
func (e *Env) Lagged(t testing.TB, delay time.Duration, opts ...store.Option) (*store.Store, *Lag) {
	t.Helper()
	l := &Lag{Delay: delay, raw: e.DB, table: e.Table, history: map[string][]write{}}
	db, err := store.NewClient(context.Background(), e.Endpoint, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			if err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("indexLag", l.handle), middleware.After); err != nil {
				return err
			}
			return e.conflicts.play(s)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, e.Table, opts...), l
}

func (l *Lag) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	keys := writtenKeys(in.Parameters)
	if len(keys) == 0 {
		out, md, err := next.HandleInitialize(ctx, in)
		if q, ok := in.Parameters.(*dynamodb.QueryInput); ok && err == nil && q.IndexName != nil {
			l.rewind(q, out.Result.(*dynamodb.QueryOutput))
		}
		return out, md, err
	}
	before, err := l.images(ctx, keys)
	if err != nil {
		return middleware.InitializeOutput{}, middleware.Metadata{}, err
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err == nil {
		l.mu.Lock()
		now := time.Now()
		for _, k := range keys {
			ks := keyString(k)
			l.history[ks] = append(l.history[ks], write{at: now, before: before[ks]})
		}
		l.mu.Unlock()
	}
	return out, md, err
}

// rewind replaces a query's items by what the index showed Delay ago.
func (l *Lag) rewind(q *dynamodb.QueryInput, out *dynamodb.QueryOutput) {
	l.mu.Lock()
	defer l.mu.Unlock()
	horizon := time.Now().Add(-l.Delay)
	pk := q.ExpressionAttributeValues[":pk"]
	kept := out.Items[:0]
	for _, it := range out.Items {
		img := it
		for _, w := range l.history[keyString(it)] {
			if w.at.After(horizon) {
				img = w.before // the version before the oldest write still in flight
				break
			}
		}
		if img == nil || !sameValue(img["GSI1PK"], pk) {
			continue
		}
		kept = append(kept, img)
	}
	out.Items = kept
	out.Count = int32(len(kept))
}

// images reads the current items at keys, strongly consistent.
func (l *Lag) images(ctx context.Context, keys []map[string]types.AttributeValue) (map[string]map[string]types.AttributeValue, error) {
	out := map[string]map[string]types.AttributeValue{}
	uniq := map[string]map[string]types.AttributeValue{}
	for _, k := range keys {
		uniq[keyString(k)] = k
	}
	var batch []map[string]types.AttributeValue
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		req := map[string]types.KeysAndAttributes{l.table: {Keys: batch, ConsistentRead: aws.Bool(true)}}
		for len(req) > 0 {
			res, err := l.raw.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return err
			}
			for _, it := range res.Responses[l.table] {
				out[keyString(it)] = it
			}
			req = res.UnprocessedKeys
		}
		batch = nil
		return nil
	}
	for _, k := range uniq {
		if batch = append(batch, k); len(batch) == 100 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	return out, flush()
}

// writtenKeys lists the keys a write request touches.
func writtenKeys(in any) []map[string]types.AttributeValue {
	keyOf := func(it map[string]types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
	}
	var keys []map[string]types.AttributeValue
	switch p := in.(type) {
	case *dynamodb.PutItemInput:
		keys = append(keys, keyOf(p.Item))
	case *dynamodb.UpdateItemInput:
		keys = append(keys, p.Key)
	case *dynamodb.DeleteItemInput:
		keys = append(keys, p.Key)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range p.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					keys = append(keys, keyOf(r.PutRequest.Item))
				case r.DeleteRequest != nil:
					keys = append(keys, r.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range p.TransactItems {
			switch {
			case it.Put != nil:
				keys = append(keys, keyOf(it.Put.Item))
			case it.Update != nil:
				keys = append(keys, it.Update.Key)
			case it.Delete != nil:
				keys = append(keys, it.Delete.Key)
			}
		}
	}
	return keys
}

func keyString(it map[string]types.AttributeValue) string {
	s := func(v types.AttributeValue) string {
		if m, ok := v.(*types.AttributeValueMemberS); ok {
			return m.Value
		}
		return ""
	}
	return s(it["PK"]) + "\x00" + s(it["SK"])
}

func sameValue(a, b types.AttributeValue) bool {
	x, ok1 := a.(*types.AttributeValueMemberS)
	y, ok2 := b.(*types.AttributeValueMemberS)
	return ok1 && ok2 && x.Value == y.Value
}
