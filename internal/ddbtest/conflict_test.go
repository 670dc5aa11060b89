package ddbtest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestConflictCancelsATransactionOnce: a transaction that includes an item
// of a transaction in flight is cancelled; run again while that one is
// still in flight, it is not cancelled a second time but waits for it to
// end, then goes ahead. So a test's retries of a conflict are bounded
// whatever the machine's scheduling.
func TestConflictCancelsATransactionOnce(t *testing.T) {
	var c conflicts
	tx := func(keys ...string) context.Context {
		in := &dynamodb.TransactWriteItemsInput{}
		for _, k := range keys {
			in.TransactItems = append(in.TransactItems, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: k}, "SK": &types.AttributeValueMemberS{Value: k}}}})
		}
		return middleware.WithStackValue(context.Background(), transactionKey{}, in)
	}
	run := func(ctx context.Context, sent chan<- string, release <-chan struct{}, name string) (cancelled bool) {
		out, _, err := c.handle(ctx, middleware.DeserializeInput{}, middleware.DeserializeHandlerFunc(
			func(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
				sent <- name
				<-release
				return middleware.DeserializeOutput{}, middleware.Metadata{}, nil
			}))
		if err != nil {
			t.Error(err)
		}
		resp, ok := out.RawResponse.(*smithyhttp.Response)
		return ok && resp.StatusCode == 400
	}
	sent := make(chan string, 3)
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	close(releaseB)
	doneA := make(chan bool)
	go func() { doneA <- run(tx("k", "a"), sent, releaseA, "A") }()
	if got := <-sent; got != "A" {
		t.Fatalf("%s was sent first", got)
	}
	// A is in flight: B, which shares k with it, is cancelled.
	if !run(tx("k", "b"), sent, releaseB, "B") {
		t.Fatal("B was not cancelled while A was in flight")
	}
	// Run again, B waits for A rather than being cancelled again.
	doneB := make(chan bool)
	go func() { doneB <- run(tx("b", "k"), sent, releaseB, "B") }()
	// C touches no item of A's: it goes ahead while B waits.
	if run(tx("c"), sent, releaseB, "C") || <-sent != "C" {
		t.Fatal("C did not go ahead")
	}
	close(releaseA)
	if <-doneA {
		t.Fatal("A was cancelled")
	}
	if got := <-sent; got != "B" {
		t.Fatalf("%s was sent after A ended; want B", got)
	}
	if <-doneB {
		t.Fatal("B was cancelled twice")
	}
	if c.n != 1 {
		t.Errorf("%d cancellations; want 1", c.n)
	}
}
