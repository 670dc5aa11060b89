package store

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// sent counts the writes that reach the server.
type sent struct {
	DB
	n int
}

func (s *sent) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	s.n++
	return &dynamodb.PutItemOutput{}, nil
}

func (s *sent) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	s.n++
	return &dynamodb.UpdateItemOutput{}, nil
}

func (s *sent) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	s.n++
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func (s *sent) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	s.n++
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// TestNoWriteHoldsAnEmptyCollection: a write that holds an empty list,
// map or set anywhere (in a put, an update's values, a batch, a
// transaction) is refused before it is sent, as an internal error (500,
// not a 503 to retry); the same values without the empty one are sent.
func TestNoWriteHoldsAnEmptyCollection(t *testing.T) {
	ctx := context.Background()
	emptyL := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
	nested := &types.AttributeValueMemberM{Value: item{"0": &types.AttributeValueMemberL{Value: []types.AttributeValue{num(1), emptyL}}}}
	for name, bad := range map[string]types.AttributeValue{
		"an empty list":          emptyL,
		"an empty map":           &types.AttributeValueMemberM{Value: item{}},
		"an empty string set":    &types.AttributeValueMemberSS{},
		"an empty number set":    &types.AttributeValueMemberNS{},
		"an empty binary set":    &types.AttributeValueMemberBS{},
		"an empty list in a map": nested,
		"an empty map in a list": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: item{}}}},
		"an empty set in a map":  &types.AttributeValueMemberM{Value: item{"a": &types.AttributeValueMemberSS{}}},
	} {
		db := &sent{}
		s := New(db, "t")
		it := merge(key("X#1", "X"), item{"v": bad})
		writes := []func() error{
			func() error { _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{Item: it}); return err },
			func() error {
				_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{Key: key("X#1", "X"), ExpressionAttributeValues: item{":v": bad}})
				return err
			},
			func() error {
				_, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
					"t": {{PutRequest: &types.PutRequest{Item: key("X#2", "X")}}, {PutRequest: &types.PutRequest{Item: it}}}}})
				return err
			},
			func() error {
				_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{Item: key("X#2", "X")}}, {Update: &types.Update{Key: key("X#1", "X"), ExpressionAttributeValues: item{":v": bad}}}}})
				return err
			},
		}
		for i, w := range writes {
			err := dbErr("write", w())
			if err == nil || scangate.KindOf(err) != scangate.KindInternal {
				t.Errorf("%s, write %d: %v; want an internal error", name, i, err)
			}
		}
		if db.n != 0 {
			t.Errorf("%s: %d writes sent", name, db.n)
		}
	}
	db := &sent{}
	s := New(db, "t")
	ok := item{"l": numList([]int64{1}), "m": &types.AttributeValueMemberM{Value: item{"a": null()}}, "ss": &types.AttributeValueMemberSS{Value: []string{"a"}}, "s": str("")}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{Item: merge(key("X#1", "X"), ok)}); err != nil || db.n != 1 {
		t.Errorf("a write without an empty collection: %v, %d sent", err, db.n)
	}
}
