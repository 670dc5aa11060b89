// Package ddbtest gives tests a real DynamoDB client on a fresh table: on
// the embedded DynamoDB-API server by default, or on TEST_DYNAMODB_ENDPOINT
// (DynamoDB Local in CI). It counts round trips with SDK middleware and
// injects faults there, plays DynamoDB's transaction conflicts there, so fault tests run the same on either server and
// never touch a server while it serves. Every Env is its own: tests that
// each call New may run in parallel.
package ddbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/store"
)

// inputKey carries a call's input from the Initialize step to the fault
// injection in the Deserialize step.
type inputKey struct{}

// Env is a store on a fresh table. Its client retries failed attempts
// without waiting; its store retries lost races with the deployed policy
// (retry.Default: waits of milliseconds). Its clients play DynamoDB's
// transaction conflicts (conflicts), each transaction cancelled once at
// most.
type Env struct {
	Store *store.Store
	DB    *dynamodb.Client
	Table string
	// Endpoint is the URL the client talks to.
	Endpoint string
	trips    atomic.Int64
	answers  atomic.Int64 // numbers the injected answers' request ids
	// MaxTransactItems and MaxBatchItems are the most items sent in one
	// TransactWriteItems and one BatchWriteItem, to check DynamoDB's limits
	// (100 and 25) where the embedded server does not enforce them.
	MaxTransactItems, MaxBatchItems atomic.Int64
	// Hook, when set, runs before every DynamoDB call (once per call, not
	// per attempt) with the operation's name: tests use it to pick the
	// point at which a Fault starts.
	Hook atomic.Pointer[func(op string)]
	// Fault, when set, runs for every attempt of every call, after the
	// SDK's retryer, just before the request would be sent. When it returns
	// an *Answer, the request is not sent and the SDK receives that answer
	// as the service's HTTP response: it deserializes, retries and reports
	// it exactly as a real one (see InternalServerError, Throttled,
	// Canceled). Any other error is returned as the transport's.
	Fault atomic.Pointer[func(op string, input any) error]

	conflicts conflicts
}

func storeMax(a *atomic.Int64, n int64) {
	for {
		old := a.Load()
		if n <= old || a.CompareAndSwap(old, n) {
			return
		}
	}
}

// RoundTrips returns the number of requests sent to DynamoDB so far,
// retries included; an attempt a Fault answered counts as one.
func (e *Env) RoundTrips() int64 { return e.trips.Load() }

// CountTrips returns how many round trips fn makes.
func (e *Env) CountTrips(fn func()) int64 {
	before := e.RoundTrips()
	fn()
	return e.RoundTrips() - before
}

// External reports whether the tests run on an external endpoint.
func External() bool { return os.Getenv("TEST_DYNAMODB_ENDPOINT") != "" }

// New returns a store on a fresh table.
func New(t testing.TB) *Env {
	t.Helper()
	e := &Env{Endpoint: os.Getenv("TEST_DYNAMODB_ENDPOINT")}
	embedded := e.Endpoint == ""
	if embedded {
		emb, err := localstack.StartEmbedded()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = emb.Close() })
		e.Endpoint = emb.URL
	}
	ctx := context.Background()
	db, err := store.NewClient(ctx, e.Endpoint, func(o *dynamodb.Options) {
		o.Retryer = withoutDelay(o.Retryer)
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("recordSizes",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if h := e.Hook.Load(); h != nil {
						(*h)(middleware.GetOperationName(ctx))
					}
					ctx = middleware.WithStackValue(ctx, inputKey{}, in.Parameters)
					switch p := in.Parameters.(type) {
					case *dynamodb.TransactWriteItemsInput:
						storeMax(&e.MaxTransactItems, int64(len(p.TransactItems)))
					case *dynamodb.BatchWriteItemInput:
						n := 0
						for _, reqs := range p.RequestItems {
							n += len(reqs)
						}
						storeMax(&e.MaxBatchItems, int64(n))
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
			if err != nil {
				return err
			}
			err = s.Finalize.Add(middleware.FinalizeMiddlewareFunc("countRoundTrips",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					e.trips.Add(1)
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
			if err != nil {
				return err
			}
			// Last of the Deserialize step: what they return is what the
			// SDK's deserializer and retryer see as the server's response.
			if err := s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("injectFault", e.injectFault), middleware.After); err != nil {
				return err
			}
			return e.conflicts.play(s)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	e.Table = "scangate-test-" + hex.EncodeToString(b[:])
	if err := store.CreateTable(ctx, db, e.Table); err != nil {
		t.Fatal(err)
	}
	if !embedded {
		t.Cleanup(func() {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &e.Table})
		})
	}
	e.DB, e.Store = db, store.New(db, e.Table, store.WithRetry(retry.Default))
	e.trips.Store(0)
	return e
}

// injectFault answers an attempt in the server's place when the Fault says so.
func (e *Env) injectFault(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	f := e.Fault.Load()
	if f == nil {
		return next.HandleDeserialize(ctx, in)
	}
	err := (*f)(middleware.GetOperationName(ctx), middleware.GetStackValue(ctx, inputKey{}))
	if err == nil {
		return next.HandleDeserialize(ctx, in)
	}
	if a, ok := err.(*Answer); ok {
		id := "injected-" + strconv.FormatInt(e.answers.Add(1), 10)
		return middleware.DeserializeOutput{RawResponse: a.response(id)}, middleware.Metadata{}, nil
	}
	return middleware.DeserializeOutput{}, middleware.Metadata{}, err
}

// withoutDelay keeps the client's retry policy (attempts, which errors are
// retried, the retry quota) but makes its waits between attempts zero, so
// that fault tests do not sleep through the SDK's backoff.
func withoutDelay(r aws.Retryer) aws.Retryer {
	if v2, ok := r.(aws.RetryerV2); ok {
		return noDelay{v2}
	}
	return r
}

type noDelay struct{ aws.RetryerV2 }

func (noDelay) RetryDelay(int, error) (time.Duration, error) { return 0, nil }

// Recorder returns a store on the same table whose every call is first
// passed to record with the operation's name and input, for tests that
// check which DynamoDB actions code uses; optFns are further options of its
// client (nil ones are skipped).
func (e *Env) Recorder(t testing.TB, record func(op string, input any), optFns ...func(*dynamodb.Options)) *store.Store {
	t.Helper()
	return e.RecorderWith(t, record, nil, optFns...)
}

// RecorderWith is Recorder with further options of the store.
func (e *Env) RecorderWith(t testing.TB, record func(op string, input any), storeOpts []store.Option, optFns ...func(*dynamodb.Options)) *store.Store {
	t.Helper()
	opts := []func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("record",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					record(middleware.GetOperationName(ctx), in.Parameters)
					return next.HandleInitialize(ctx, in)
				}), middleware.After)
			if err != nil {
				return err
			}
			return e.conflicts.play(s)
		})
	}}
	for _, fn := range optFns {
		if fn != nil {
			opts = append(opts, fn)
		}
	}
	db, err := store.NewClient(context.Background(), e.Endpoint, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, e.Table, append([]store.Option{store.WithRetry(retry.Default)}, storeOpts...)...)
}
