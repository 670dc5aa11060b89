package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/scangate"
)

// This file holds the DynamoDB helpers every item kind shares: attribute
// values, batched reads and writes that ask again for what DynamoDB leaves
// unprocessed, paginated queries, and the classification of errors.

// DynamoDB's limits on one request.
const (
	batchGetMax   = 100 // keys per BatchGetItem
	batchWriteMax = 25  // requests per BatchWriteItem
	txMaxItems    = 100 // items per TransactWriteItems
	// txMaxBytes is the most bytes of the items of one
	// TransactWriteItems (an item updated counts whole).
	txMaxBytes = 4_000_000
)

// batchParallel is how many batches of one operation run at once: a
// recording of 25,000 findings is about 1,100 BatchWriteItem calls, which
// on AWS wait on the network (docs/BENCHMARKS.md: with 10 ms a call, 8 at
// once wait about 1.4 s in all, 4 at once 2.9 s).
const batchParallel = 8

// item is one DynamoDB item.
type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func boolean(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }

func null() types.AttributeValue { return &types.AttributeValueMemberNULL{Value: true} }

func key(pk, sk string) item { return item{aPK: str(pk), aSK: str(sk)} }

// keyOf returns the key of a stored item.
func keyOf(it item) item { return key(getS(it, aPK), getS(it, aSK)) }

// keyString is a key as one string, for maps.
func keyString(k item) string { return getS(k, aPK) + "\x00" + getS(k, aSK) }

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func parseN(v types.AttributeValue) int64 {
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(n.Value, 10, 64)
		return i
	}
	return 0
}

func getN(it item, name string) int64 { return parseN(it[name]) }

// getNp reads a number that may be absent or NULL.
func getNp(it item, name string) *int64 {
	if _, ok := it[name].(*types.AttributeValueMemberN); !ok {
		return nil
	}
	n := getN(it, name)
	return &n
}

func numOrNull(v *int64) types.AttributeValue {
	if v == nil {
		return null()
	}
	return num(*v)
}

// getBool reads a boolean, or def when it is absent.
func getBool(it item, name string, def bool) bool {
	if v, ok := it[name].(*types.AttributeValueMemberBOOL); ok {
		return v.Value
	}
	return def
}

func getTime(it item, name string) scangate.Time {
	t, _ := scangate.ParseTime(getS(it, name))
	return t
}

// numList is a list of numbers as an attribute value.
func numList(l []int64) types.AttributeValue {
	v := make([]types.AttributeValue, len(l))
	for i, n := range l {
		v[i] = num(n)
	}
	return &types.AttributeValueMemberL{Value: v}
}

// setIDs stores a list of ids; an empty list is left out (and reads back
// as empty), which the embedded server also needs.
func setIDs(it item, name string, l []int64) {
	if len(l) > 0 {
		it[name] = numList(l)
	}
}

func getIDs(it item, name string) []int64 {
	out := []int64{}
	if l, ok := it[name].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			out = append(out, parseN(v))
		}
	}
	return out
}

// setStrings stores a list of strings, left out when empty.
func setStrings(it item, name string, l []string) {
	if len(l) == 0 {
		return
	}
	v := make([]types.AttributeValue, len(l))
	for i, s := range l {
		v[i] = str(s)
	}
	it[name] = &types.AttributeValueMemberL{Value: v}
}

func getStrings(it item, name string) []string {
	var out []string
	if l, ok := it[name].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				out = append(out, s.Value)
			}
		}
	}
	return out
}

// dbErr classifies a DynamoDB error and names the operation: requests the
// store built wrongly are internal errors; a context that ended keeps its
// kind (a deadline is unavailability, a cancellation a caller gone); the
// rest (throttling, server errors, timeouts that outlasted the SDK's
// retries) makes the service unavailable for a moment.
func dbErr(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return retry.Context(op, err)
	}
	err = fmt.Errorf("%s: %w", op, err)
	if isUnstorable(err) {
		return err
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ValidationException", "ResourceNotFoundException", "SerializationException":
			return err
		}
	}
	return scangate.Unavailable(err)
}

// conditionFailed reports whether a single-item write was refused by its
// condition expression.
func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// batchGet reads up to batchGetMax items with strongly consistent reads,
// asking again for any keys DynamoDB leaves unprocessed.
func (s *Store) batchGet(ctx context.Context, op string, keys []item) ([]item, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	var items []item
	err := s.retry.Do(ctx, op, func(int) (bool, error) {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return true, dbErr(op, err)
		}
		items = append(items, out.Responses[s.table]...)
		req = out.UnprocessedKeys
		return len(req) == 0, nil
	})
	return items, err
}

// batchGetAll reads any number of items (keys may repeat), batchGetMax
// keys a request, batchParallel requests at a time.
func (s *Store) batchGetAll(ctx context.Context, op string, keys []item) ([]item, error) {
	seen := map[string]bool{}
	var batches [][]item
	for _, k := range keys {
		if ks := keyString(k); !seen[ks] {
			seen[ks] = true
			if n := len(batches); n == 0 || len(batches[n-1]) == batchGetMax {
				batches = append(batches, nil)
			}
			batches[len(batches)-1] = append(batches[len(batches)-1], k)
		}
	}
	results := make([][]item, len(batches))
	idx := make([]int, len(batches))
	for i := range idx {
		idx[i] = i
	}
	err := parallel(ctx, batchParallel, idx, func(ctx context.Context, i int) error {
		items, err := s.batchGet(ctx, op, batches[i])
		results[i] = items
		return err
	})
	if err != nil {
		return nil, err
	}
	var all []item
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}

// writer writes items with BatchWriteItem as producers hand them over,
// each producer through a batcher of its own: batchWriteMax items a
// request, batchParallel requests at once, each asking again for what
// DynamoDB leaves unprocessed. Its first error stops it: send returns it
// from then on, no batch is sent after it, and close returns it once the
// requests in flight have their answers. Those are not cancelled: a
// request whose client gave up may still be applied by the server after
// the client returned, so a caller that deletes what a failed writer
// wrote (a failed recording) would miss it (seen on DynamoDB Local under
// load: findings left after a failed recording's deletion). It holds at
// most batchParallel batches besides those in flight, so a producer
// waits for it rather than memory growing.
type writer struct {
	op    string
	ctx   context.Context
	stop  chan struct{} // closed at the first error
	queue chan []types.WriteRequest
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
}

func (s *Store) newWriter(ctx context.Context, op string) *writer {
	w := &writer{op: op, ctx: ctx, stop: make(chan struct{}), queue: make(chan []types.WriteRequest, batchParallel)}
	for range batchParallel {
		w.wg.Go(func() {
			for b := range w.queue {
				if w.failed() == nil {
					if err := s.writeBatch(ctx, op, b); err != nil {
						w.fail(err)
					}
				}
			}
		})
	}
	return w
}

func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
		close(w.stop)
	}
}

// send hands a batch (at most batchWriteMax requests) to the writer.
func (w *writer) send(batch []types.WriteRequest) error {
	if err := w.failed(); err != nil {
		return err
	}
	select {
	case w.queue <- batch:
	case <-w.stop:
	case <-w.ctx.Done():
		w.fail(dbErr(w.op, w.ctx.Err()))
	}
	return w.failed()
}

// close waits for every request in flight (every producer has sent its
// last batch); it returns the first error.
func (w *writer) close() error {
	close(w.queue)
	w.wg.Wait()
	return w.failed()
}

// batcher gathers one producer's requests into batches for a writer.
type batcher struct {
	w     *writer
	batch []types.WriteRequest
}

func (b *batcher) put(req types.WriteRequest) error {
	b.batch = append(b.batch, req)
	if len(b.batch) < batchWriteMax {
		return nil
	}
	return b.flush()
}

// flush sends what the batcher holds.
func (b *batcher) flush() error {
	if len(b.batch) == 0 {
		return b.w.failed()
	}
	batch := b.batch
	b.batch = nil
	return b.w.send(batch)
}

// writeBatch writes one batch, asking again for unprocessed items.
func (s *Store) writeBatch(ctx context.Context, op string, batch []types.WriteRequest) error {
	pending := map[string][]types.WriteRequest{s.table: batch}
	return s.retry.Do(ctx, op, func(int) (bool, error) {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return true, dbErr(op, err)
		}
		pending = out.UnprocessedItems
		return len(pending) == 0, nil
	})
}

// parallel runs fn on every element, at most n at a time, and returns the
// first error; after an error it starts nothing more.
func parallel[T any](ctx context.Context, n int, elems []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, e := range elems {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, e); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}

// queryPages runs a query to its last page, handing each page to fn.
func (s *Store) queryPages(ctx context.Context, op string, in *dynamodb.QueryInput, fn func([]item) error) error {
	in.TableName = &s.table
	in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression)
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return dbErr(op, err)
		}
		if err := fn(page.Items); err != nil {
			return err
		}
	}
	return nil
}

// queryAll runs a query to its last page.
func (s *Store) queryAll(ctx context.Context, op string, in *dynamodb.QueryInput) ([]item, error) {
	in.TableName = &s.table
	in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression, in.FilterExpression, in.ProjectionExpression)
	var all []item
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, dbErr(op, err)
		}
		all = append(all, page.Items...)
	}
	return all, nil
}

// updateItem runs one UpdateItem, its placeholders named.
func (s *Store) updateItem(ctx context.Context, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	in.TableName = &s.table
	in.ExpressionAttributeNames = namesOf(in.UpdateExpression, in.ConditionExpression)
	return s.db.UpdateItem(ctx, in)
}

// getItem reads one item with a strongly consistent read; nil when absent.
func (s *Store) getItem(ctx context.Context, op string, k item) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, dbErr(op, err)
	}
	return out.Item, nil
}

// itemSize is an item's size by DynamoDB's rules: each attribute's name
// plus its value; strings by UTF-8 bytes, numbers about one byte per two
// significant digits plus one, booleans and nulls one byte, lists and maps
// three bytes plus one per element plus their elements (and map keys).
func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		digits := len(strings.TrimLeft(strings.TrimPrefix(v.Value, "-"), "0"))
		return (digits+1)/2 + 1
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	panic("unsized attribute type")
}
