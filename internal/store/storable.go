package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// storable refuses, before it is sent, every write that holds an empty
// list, map or set, at any depth (an item, or the values of an update's
// expression). DynamoDB stores empty lists and maps; the embedded server
// of make run stores them too, but rolls a cancelled transaction back by
// restoring a copy of its table, and its copy turns an empty list, map or
// set into a value of no type, after which every Query of the table fails
// until it restarts. The store never needs one (an empty list is left out
// and reads back empty, an empty judgement is NULL), so it writes none,
// on any server: the same writes everywhere, and a write that would wedge
// the embedded server is a bug that fails at once (500), on every server.
type storable struct{ DB }

// unstorableError is a write refused by storable: a bug of the store.
type unstorableError struct{ err error }

func (e *unstorableError) Error() string { return e.err.Error() }

func (d storable) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := checkStorable("PutItem", in.Item); err != nil {
		return nil, err
	}
	return d.DB.PutItem(ctx, in, opts...)
}

func (d storable) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := checkStorable("UpdateItem", in.ExpressionAttributeValues); err != nil {
		return nil, err
	}
	return d.DB.UpdateItem(ctx, in, opts...)
}

func (d storable) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			if r.PutRequest != nil {
				if err := checkStorable("BatchWriteItem", r.PutRequest.Item); err != nil {
					return nil, err
				}
			}
		}
	}
	return d.DB.BatchWriteItem(ctx, in, opts...)
}

func (d storable) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		var err error
		switch {
		case it.Put != nil:
			err = checkStorable("TransactWriteItems", it.Put.Item)
		case it.Update != nil:
			err = checkStorable("TransactWriteItems", it.Update.ExpressionAttributeValues)
		}
		if err != nil {
			return nil, err
		}
	}
	return d.DB.TransactWriteItems(ctx, in, opts...)
}

// checkStorable finds the first empty list, map or set among values.
func checkStorable(op string, values map[string]types.AttributeValue) error {
	for name, v := range values {
		if path, ok := emptyIn(v); !ok {
			return &unstorableError{fmt.Errorf("%s: %s%s is an empty list, map or set, which the store never writes", op, name, path)}
		}
	}
	return nil
}

// emptyIn reports false, and where, when v is or holds an empty list, map
// or set.
func emptyIn(v types.AttributeValue) (string, bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberL:
		if len(v.Value) == 0 {
			return "", false
		}
		for i, e := range v.Value {
			if path, ok := emptyIn(e); !ok {
				return fmt.Sprintf("[%d]%s", i, path), false
			}
		}
	case *types.AttributeValueMemberM:
		if len(v.Value) == 0 {
			return "", false
		}
		for k, e := range v.Value {
			if path, ok := emptyIn(e); !ok {
				return "." + k + path, false
			}
		}
	case *types.AttributeValueMemberSS:
		return "", len(v.Value) > 0
	case *types.AttributeValueMemberNS:
		return "", len(v.Value) > 0
	case *types.AttributeValueMemberBS:
		return "", len(v.Value) > 0
	}
	return "", true
}

// isUnstorable reports whether err is a write storable refused.
func isUnstorable(err error) bool {
	var u *unstorableError
	return errors.As(err, &u)
}
