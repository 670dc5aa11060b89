package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/scangate"
)

func tokenKey(hash string) item { return key("TOKEN#"+hash, "TOKEN") }

func userTokensPK(userID int64) string { return "USERTOKENS#" + strconv.FormatInt(userID, 10) }

// Labels of login transactions.
const (
	lToken = "token"
	lSlot  = "slot"
)

// expiredItemGrace is how long after its expiry DynamoDB's TTL may delete an
// item; the service itself checks expiry, so the TTL only reclaims space.
const expiredItemGrace = 24 * time.Hour

func tokenItem(t scangate.Token) item {
	it := tokenKey(t.Hash)
	it[aUserID] = num(t.UserID)
	it[aTokenKind] = str(t.Kind)
	it[aCreatedAt] = str(scangate.At(t.CreatedAt).String())
	it[aExpiresAt] = num(t.ExpiresAt.Unix())
	it[aTTL] = num(t.ExpiresAt.Add(expiredItemGrace).Unix())
	it[aGSI1PK] = str(userTokensPK(t.UserID))
	it[aGSI1SK] = str(scangate.At(t.CreatedAt).String())
	return it
}

func tokenFrom(it item) scangate.Token {
	return scangate.Token{
		Hash:      getS(it, aPK)[len("TOKEN#"):],
		UserID:    getN(it, aUserID),
		Kind:      getS(it, aTokenKind),
		CreatedAt: getTime(it, aCreatedAt).Time,
		ExpiresAt: time.Unix(getN(it, aExpiresAt), 0),
		Revoked:   getBool(it, aRevoked, false),
	}
}

// PutToken stores a token's hash for a user.
func (s *Store) PutToken(ctx context.Context, t scangate.Token) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                &s.table,
		Item:                     tokenItem(t),
		ConditionExpression:      aws.String("attribute_not_exists(" + ref(aPK) + ")"),
		ExpressionAttributeNames: map[string]string{ref(aPK): aPK},
	})
	if err != nil {
		return dbErr("put token", err)
	}
	return nil
}

// TokenUser reads a token and the user it names in one BatchGetItem round
// trip. A missing token or user is reported as nil.
func (s *Store) TokenUser(ctx context.Context, hash string, userID int64) (*scangate.Token, *scangate.User, error) {
	items, err := s.batchGet(ctx, "get token and user", []item{tokenKey(hash), userKey(userID)})
	if err != nil {
		return nil, nil, err
	}
	var tok *scangate.Token
	var user *scangate.User
	for _, it := range items {
		switch getS(it, aSK) {
		case "TOKEN":
			t := tokenFrom(it)
			tok = &t
		case "USER":
			u := userFrom(it)
			user = &u
		}
	}
	return tok, user, nil
}

// RevokeToken marks one token revoked. It reports false if there is no such token.
func (s *Store) RevokeToken(ctx context.Context, hash string) (bool, error) {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       tokenKey(hash),
		UpdateExpression:          aws.String("SET " + ref(aRevoked) + " = :t"),
		ConditionExpression:       aws.String("attribute_exists(" + ref(aPK) + ")"),
		ExpressionAttributeValues: item{":t": boolean(true)},
	})
	switch {
	case err == nil:
		return true, nil
	case conditionFailed(err):
		return false, nil
	}
	return false, dbErr("revoke token", err)
}

// RevokeUserTokens revokes every token of a user and reports how many it found.
func (s *Store) RevokeUserTokens(ctx context.Context, userID int64) (int, error) {
	items, err := s.queryAll(ctx, "list user tokens", &dynamodb.QueryInput{
		IndexName:                 aws.String(GSI1),
		KeyConditionExpression:    aws.String(ref(aGSI1PK) + " = :pk"),
		ExpressionAttributeValues: item{":pk": str(userTokensPK(userID))},
	})
	if err != nil {
		return 0, err
	}
	for i, it := range items {
		if _, err := s.RevokeToken(ctx, tokenFrom(it).Hash); err != nil {
			return i, fmt.Errorf("revoke tokens of user %d: %w", userID, err)
		}
	}
	return len(items), nil
}
