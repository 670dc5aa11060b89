// Package store keeps scangate's records in one DynamoDB table.
//
// Keys are generic (PK, SK, and GSI1PK/GSI1SK for one sparse index) so that
// new access patterns fit without a new table. Every item kind has its own
// PK prefix; docs/DATA.md lists them.
package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/scangate/scangate/pkg/scangate"
)

// DB is the part of the DynamoDB API the store uses.
type DB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Store reads and writes scangate's records in one table.
type Store struct {
	db    DB
	table string
}

// New returns a store on the named table.
func New(db DB, table string) *Store {
	return &Store{db: db, table: table}
}

// Table names the table the store uses.
func (s *Store) Table() string { return s.table }

// item is one DynamoDB item.
type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func boolean(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }

func key(pk, sk string) item { return item{"PK": str(pk), "SK": str(sk)} }

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it item, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

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
		return &types.AttributeValueMemberNULL{Value: true}
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

// nextID allocates the next id of an entity from its counter item: one
// UpdateItem ADD, so ids are unique and increase, at up to about 1,000 ids
// per second per entity (the write limit of one item).
func (s *Store) nextID(ctx context.Context, entity string) (int64, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       key("COUNTER#"+entity, "COUNTER"),
		UpdateExpression:          aws.String("ADD #n :one"),
		ExpressionAttributeNames:  map[string]string{"#n": "n"},
		ExpressionAttributeValues: item{":one": num(1)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, dbErr("allocate "+entity+" id", err)
	}
	return getN(out.Attributes, "n"), nil
}

// dbErr classifies a DynamoDB error: requests the store built wrongly are
// internal errors; everything else (throttling, server errors, timeouts that
// outlasted the SDK's retries) makes the service unavailable for a moment.
func dbErr(op string, err error) error {
	err = fmt.Errorf("%s: %w", op, err)
	if errors.Is(err, context.Canceled) {
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

// cancelReasons returns the codes of a cancelled transaction, one per item,
// or nil if err is not a cancellation.
func cancelReasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	codes := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		codes[i] = aws.ToString(r.Code)
	}
	return codes
}

// conflicted reports whether a cancelled transaction lost a race with
// another one (and so may simply be run again).
func conflicted(codes []string) bool {
	for _, c := range codes {
		if c == "TransactionConflict" {
			return true
		}
	}
	return false
}

// maxAttempts bounds the optimistic retries of a read-modify-write.
const maxAttempts = 30

// retry runs fn until it reports done, backing off with jitter between
// attempts. It gives up as unavailable after maxAttempts.
func retry(ctx context.Context, op string, fn func() (done bool, err error)) error {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		done, err := fn()
		if done || err != nil {
			return err
		}
		backoff := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	return scangate.Unavailable(fmt.Errorf("%s: still contended after %d attempts", op, maxAttempts))
}
