package ddbtest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	miniserver "github.com/truora/minidyn/server"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/store"
)

func itemKey(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}}
}

// TestFaultAnswers: each injected answer reaches the caller as the SDK
// reports the real one (its error type, HTTP status and request id), is
// retried or not as the real one is, and changes nothing in the table.
func TestFaultAnswers(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	maxAttempts := env.DB.Options().Retryer.MaxAttempts()
	if maxAttempts < 2 {
		t.Fatalf("the client makes %d attempts; the fault tests need retries", maxAttempts)
	}
	if d, err := env.DB.Options().Retryer.RetryDelay(1, errors.New("x")); d != 0 || err != nil {
		t.Errorf("retry delay in tests %v %v; want 0", d, err)
	}
	plain := errors.New("connection lost")
	put := func(pk string) error {
		_, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: itemKey(pk)})
		return err
	}
	tx := func(pk string) error {
		_, err := env.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &env.Table, Item: itemKey(pk + "a")}},
			{Put: &types.Put{TableName: &env.Table, Item: itemKey(pk + "b")}},
		}})
		return err
	}
	for _, c := range []struct {
		name     string
		fault    error
		call     func(pk string) error
		attempts int
		status   int // 0: no HTTP response
		check    func(err error) bool
	}{
		{"internal server error", ddbtest.InternalServerError(), put, maxAttempts, 500, func(err error) bool {
			var e *types.InternalServerError
			return errors.As(err, &e)
		}},
		{"throttling", ddbtest.Throttled(), put, maxAttempts, 400, func(err error) bool {
			var e *types.ThrottlingException
			return errors.As(err, &e)
		}},
		{"transaction conflict", ddbtest.Canceled("None", "TransactionConflict"), tx, 1, 400, func(err error) bool {
			var e *types.TransactionCanceledException
			if !errors.As(err, &e) || len(e.CancellationReasons) != 2 {
				return false
			}
			return aws.ToString(e.CancellationReasons[0].Code) == "None" && aws.ToString(e.CancellationReasons[1].Code) == "TransactionConflict"
		}},
		{"transaction condition failed", ddbtest.Canceled("ConditionalCheckFailed", "None"), tx, 1, 400, func(err error) bool {
			var e *types.TransactionCanceledException
			return errors.As(err, &e) && aws.ToString(e.CancellationReasons[0].Code) == "ConditionalCheckFailed"
		}},
		{"other error", plain, put, 1, 0, func(err error) bool { return errors.Is(err, plain) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var attempts atomic.Int64
			f := func(string, any) error {
				attempts.Add(1)
				return c.fault
			}
			env.Fault.Store(&f)
			var err error
			trips := env.CountTrips(func() { err = c.call(c.name) })
			env.Fault.Store(nil)
			if err == nil || !c.check(err) {
				t.Fatalf("error %v (%T); not the %s the SDK makes of the real answer", err, err, c.name)
			}
			if n := attempts.Load(); n != int64(c.attempts) || trips != n {
				t.Errorf("%d attempts, %d round trips counted; want %d", n, trips, c.attempts)
			}
			var resp *awshttp.ResponseError
			switch {
			case c.status == 0 && errors.As(err, &resp):
				t.Errorf("an HTTP response for a transport error: %v", err)
			case c.status != 0 && (!errors.As(err, &resp) || resp.HTTPStatusCode() != c.status || !strings.HasPrefix(resp.ServiceRequestID(), "injected-")):
				t.Errorf("error %v; want an HTTP %d response with a request id", err, c.status)
			}
			// Nothing reached the table.
			for _, pk := range []string{c.name, c.name + "a", c.name + "b"} {
				out, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &env.Table, Key: itemKey(pk), ConsistentRead: aws.Bool(true)})
				if err != nil || out.Item != nil {
					t.Errorf("item %q after the fault: %v %v", pk, out, err)
				}
			}
			if err := c.call(c.name); err != nil {
				t.Errorf("the same call without the fault: %v", err)
			}
		})
	}
}

// TestInjectedInternalErrorIsTheServersOwn compares an injected HTTP 500
// with the embedded server's own: the caller gets the same chain of error
// types after as many attempts.
func TestInjectedInternalErrorIsTheServersOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	chain := func(err error) []string {
		var types []string
		for ; err != nil; err = errors.Unwrap(err) {
			types = append(types, fmt.Sprintf("%T", err))
		}
		return types
	}
	getItem := func(db *dynamodb.Client, table string) error {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: itemKey("a")})
		return err
	}

	env := ddbtest.New(t)
	f := func(string, any) error { return ddbtest.InternalServerError() }
	env.Fault.Store(&f)
	var injected error
	injectedTrips := env.CountTrips(func() { injected = getItem(env.DB, env.Table) })

	// The server's own failure, on a private server that serves nothing
	// else (EmulateFailureForTable takes the server's lock).
	emb, err := localstack.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	var realTrips atomic.Int64
	db, err := store.NewClient(ctx, emb.URL, func(o *dynamodb.Options) {
		o.Retryer = env.DB.Options().Retryer
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("count",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					realTrips.Add(1)
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTable(ctx, db, "real"); err != nil {
		t.Fatal(err)
	}
	emb.Server.EmulateFailureForTable("real", miniserver.FailureConditionInternalServerError)
	realTrips.Store(0)
	real := getItem(db, "real")

	if real == nil || injected == nil || !slices.Equal(chain(real), chain(injected)) {
		t.Fatalf("the server's 500: %v %v\ninjected: %v %v", real, chain(real), injected, chain(injected))
	}
	var ra, ia smithy.APIError
	if !errors.As(real, &ra) || !errors.As(injected, &ia) || ra.ErrorCode() != ia.ErrorCode() || ra.ErrorFault() != ia.ErrorFault() {
		t.Errorf("error codes: the server's %v, injected %v", ra, ia)
	}
	if realTrips.Load() != injectedTrips {
		t.Errorf("the server's 500 took %d attempts, the injected one %d", realTrips.Load(), injectedTrips)
	}
}
