package store

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

func loginFailKey(username string) item {
	return key("LOGINFAIL#"+scangate.Fold(username), "LOGINFAIL")
}

func failuresFrom(it item) scangate.LoginFailures {
	f := scangate.LoginFailures{Ver: getN(it, "ver")}
	if l, ok := it["times"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if n, ok := v.(*types.AttributeValueMemberN); ok {
				ms := getN(item{"n": n}, "n")
				f.Times = append(f.Times, time.UnixMilli(ms))
			}
		}
	}
	return f
}

// LoginLookup reads what a login needs: the user holding the username (nil
// if none) and the username's recent failures. Two round trips at most: the
// username marker and failures in one batch, then the user.
func (s *Store) LoginLookup(ctx context.Context, username string) (*scangate.User, scangate.LoginFailures, error) {
	items, err := s.batchGet(ctx, "look up login", []item{usernameKey(username), loginFailKey(username)})
	if err != nil {
		return nil, scangate.LoginFailures{}, err
	}
	var fails scangate.LoginFailures
	var userID int64
	for _, it := range items {
		switch getS(it, "SK") {
		case "LOGINFAIL":
			fails = failuresFrom(it)
		case "USERNAME":
			userID = getN(it, "user_id")
		}
	}
	if userID == 0 {
		return nil, fails, nil
	}
	u, err := s.User(ctx, userID)
	if err != nil {
		return nil, fails, err
	}
	return &u, fails, nil
}

// LoginFailures reads the recent failures of a username.
func (s *Store) LoginFailures(ctx context.Context, username string) (scangate.LoginFailures, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: loginFailKey(username), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return scangate.LoginFailures{}, dbErr("get login failures", err)
	}
	return failuresFrom(out.Item), nil
}

// SaveLoginFailures replaces the failures of a username if they are still at
// version prev.Ver, and reports false if another login changed them first.
// The item expires (TTL) once its newest failure leaves the window.
func (s *Store) SaveLoginFailures(ctx context.Context, username string, prev scangate.LoginFailures, times []time.Time, expires time.Time) (bool, error) {
	it := loginFailKey(username)
	l := make([]types.AttributeValue, len(times))
	for i, t := range times {
		l[i] = num(t.UnixMilli())
	}
	it["times"] = &types.AttributeValueMemberL{Value: l}
	it["ver"] = num(prev.Ver + 1)
	it["ttl"] = num(expires.Unix())
	in := &dynamodb.PutItemInput{TableName: &s.table, Item: it}
	if prev.Ver == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(PK)")
	} else {
		in.ConditionExpression = aws.String("ver = :ver")
		in.ExpressionAttributeValues = item{":ver": num(prev.Ver)}
	}
	_, err := s.db.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case asError(err, &ccf):
		return false, nil
	}
	return false, dbErr("save login failures", err)
}

func asError[T error](err error, target *T) bool { return errors.As(err, target) }
