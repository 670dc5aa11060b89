package ddbtest

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// conflicts plays DynamoDB's rule for transactions that neither the
// embedded server nor DynamoDB Local plays (both run one transaction at a
// time): a TransactWriteItems that includes an item which another
// TransactWriteItems still in flight includes (a ConditionCheck counts) is
// cancelled with TransactionConflict for that item. Every client of an
// Env (its store's, Recorder's) plays it, sharing the transactions in
// flight, so the tests see the cancellations concurrent work gets on AWS.
//
// It plays it deterministically: a transaction is cancelled at most once
// (a transaction is known by the keys of its items). When it runs again
// and still meets transactions in flight, it waits until they are done,
// as if DynamoDB had committed them first, and then goes ahead. So every
// retry path runs, and no test depends on how a busy machine schedules
// the racers: however many of them, however slow, no transaction is
// cancelled over and over until its bounded retries run out.
type conflicts struct {
	mu        sync.Mutex
	inFlight  map[string]int  // item key: transactions in flight that include it
	cancelled map[string]bool // transactions (their keys) cancelled once
	done      chan struct{}   // closed when a transaction ends
	n         int             // transactions cancelled so far
}

// Conflicts returns how many transactions were cancelled by the rule so far.
func (e *Env) Conflicts() int {
	e.conflicts.mu.Lock()
	defer e.conflicts.mu.Unlock()
	return e.conflicts.n
}

// play adds the rule to a client's stack: it notes each call's input, and
// judges each attempt last of the Deserialize step, as the server would.
func (c *conflicts) play(s *middleware.Stack) error {
	err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("noteTransaction",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(middleware.WithStackValue(ctx, transactionKey{}, in.Parameters), in)
		}), middleware.After)
	if err != nil {
		return err
	}
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("transactionConflicts", c.handle), middleware.After)
}

// transactionKey carries a call's input to the rule.
type transactionKey struct{}

// handle runs one attempt of a call under the rule.
func (c *conflicts) handle(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	tx, ok := middleware.GetStackValue(ctx, transactionKey{}).(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return next.HandleDeserialize(ctx, in)
	}
	keys := make([]string, len(tx.TransactItems))
	for i, it := range tx.TransactItems {
		keys[i] = transactKey(it)
	}
	id := strings.Join(slices.Sorted(slices.Values(keys)), "\x00")
	c.mu.Lock()
	for {
		codes := make([]string, len(keys))
		clash := false
		for i, k := range keys {
			codes[i] = "None"
			if c.inFlight[k] > 0 {
				codes[i], clash = "TransactionConflict", true
			}
		}
		if !clash {
			break
		}
		if !c.cancelled[id] {
			if c.cancelled == nil {
				c.cancelled = map[string]bool{}
			}
			c.cancelled[id] = true
			c.n++
			c.mu.Unlock()
			return middleware.DeserializeOutput{RawResponse: Canceled(codes...).response("conflict")}, middleware.Metadata{}, nil
		}
		done := c.ended()
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return middleware.DeserializeOutput{}, middleware.Metadata{}, ctx.Err()
		case <-done:
		}
		c.mu.Lock()
	}
	if c.inFlight == nil {
		c.inFlight = map[string]int{}
	}
	for _, k := range keys {
		c.inFlight[k]++
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		for _, k := range keys {
			if c.inFlight[k]--; c.inFlight[k] == 0 {
				delete(c.inFlight, k)
			}
		}
		if c.done != nil {
			close(c.done)
			c.done = nil
		}
		c.mu.Unlock()
	}()
	return next.HandleDeserialize(ctx, in)
}

// ended is closed when the next transaction in flight ends; c.mu is held.
func (c *conflicts) ended() <-chan struct{} {
	if c.done == nil {
		c.done = make(chan struct{})
	}
	return c.done
}

// transactKey is the key of the item a transaction item acts on.
func transactKey(it types.TransactWriteItem) string {
	switch {
	case it.Put != nil:
		return keyString(it.Put.Item)
	case it.Update != nil:
		return keyString(it.Update.Key)
	case it.Delete != nil:
		return keyString(it.Delete.Key)
	case it.ConditionCheck != nil:
		return keyString(it.ConditionCheck.Key)
	}
	return ""
}
