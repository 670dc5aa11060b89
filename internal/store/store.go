// Package store keeps scangate's records in one DynamoDB table.
//
// Keys are generic (PK, SK, and GSI1PK/GSI1SK for one sparse index) so that
// new access patterns fit without a new table. Every item kind has its own
// PK prefix; docs/DATA.md lists them.
package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/retry"
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
	TransactGetItems(context.Context, *dynamodb.TransactGetItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Store reads and writes scangate's records in one table.
type Store struct {
	db    DB
	table string
	retry retry.Policy
	// recentWindow is how long a recording stays visible to re-evaluations
	// through its group's RECENT items (the index-lag fix); 0 turns it off.
	recentWindow time.Duration
	// auditRetention is how long audit entries are kept (the table's TTL).
	auditRetention time.Duration
	// workLease is the lease of durable work (both held and dispatched);
	// 0 keeps internal/queue/work's defaults.
	workLease time.Duration
	// syncFindings is the most findings a re-evaluation runs in its
	// request; stepFindings about how many one step covers.
	syncFindings, stepFindings int
	// metrics receives the gate decisions and recordings of committed
	// transactions (nil: none).
	metrics *metrics.Emitter
}

// Option configures a Store.
type Option func(*Store)

// WithMetrics has the store emit the metrics of what it commits (gate
// decisions, scans and findings recorded) through m.
func WithMetrics(m *metrics.Emitter) Option { return func(s *Store) { s.metrics = m } }

// WithRetry sets the policy for work that lost a race (tests: no waits).
func WithRetry(p retry.Policy) Option { return func(s *Store) { s.retry = p } }

// WithRecentWindow sets how long a recording's findings are read from its
// groups' RECENT items rather than trusted to the eventually consistent
// index. Zero turns the fix off (tests that show the gap it closes).
func WithRecentWindow(d time.Duration) Option { return func(s *Store) { s.recentWindow = d } }

// WithAuditRetention sets how long audit entries are kept.
func WithAuditRetention(d time.Duration) Option { return func(s *Store) { s.auditRetention = d } }

// WithWorkLease sets the lease of durable work, held or dispatched (the
// local stack's tests shorten it, to see work resumed soon after a kill).
func WithWorkLease(d time.Duration) Option { return func(s *Store) { s.workLease = d } }

// WithReevaluation sets the most findings a re-evaluation runs in its
// request (larger ones fan out) and about how many one step covers.
func WithReevaluation(syncFindings, stepFindings int) Option {
	return func(s *Store) { s.syncFindings, s.stepFindings = syncFindings, stepFindings }
}

// DefaultRecentWindow is far beyond the index lag DynamoDB shows in
// practice (well under a second).
const DefaultRecentWindow = 10 * time.Minute

// New returns a store on the named table.
func New(db DB, table string, opts ...Option) *Store {
	s := &Store{db: storable{db}, table: table, retry: retry.Default, recentWindow: DefaultRecentWindow, auditRetention: DefaultAuditRetention,
		syncFindings: DefaultSyncFindings, stepFindings: DefaultStepFindings}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Table names the table the store uses.
func (s *Store) Table() string { return s.table }

// nextID allocates the next id of an entity from its counter item: one
// UpdateItem ADD, so ids are unique and increase, at up to about 1,000 ids
// per second per entity (the write limit of one item).
func (s *Store) nextID(ctx context.Context, entity string) (int64, error) {
	out, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       key("COUNTER#"+entity, "COUNTER"),
		UpdateExpression:          aws.String("ADD " + ref(aN) + " :one"),
		ExpressionAttributeValues: item{":one": num(1)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, dbErr("allocate "+entity+" id", err)
	}
	return getN(out.Attributes, aN), nil
}
