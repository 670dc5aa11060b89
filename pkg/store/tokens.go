package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

func tokenKey(hash string) item { return key("TOKEN#"+hash, "TOKEN") }

func userTokensPK(userID int64) string { return "USERTOKENS#" + strconv.FormatInt(userID, 10) }

// expiredItemGrace is how long after its expiry DynamoDB's TTL may delete an
// item; the service itself checks expiry, so the TTL only reclaims space.
const expiredItemGrace = 24 * time.Hour

// PutToken stores a token's hash for a user.
func (s *Store) PutToken(ctx context.Context, t scangate.Token) error {
	it := tokenKey(t.Hash)
	it["user_id"] = num(t.UserID)
	it["kind"] = str(t.Kind)
	it["created_at"] = str(scangate.At(t.CreatedAt).String())
	it["expires_at"] = num(t.ExpiresAt.Unix())
	it["ttl"] = num(t.ExpiresAt.Add(expiredItemGrace).Unix())
	it["GSI1PK"] = str(userTokensPK(t.UserID))
	it["GSI1SK"] = str(scangate.At(t.CreatedAt).String())
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           &s.table,
		Item:                it,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if err != nil {
		return dbErr("put token", err)
	}
	return nil
}

func tokenFrom(it item) scangate.Token {
	return scangate.Token{
		Hash:      getS(it, "PK")[len("TOKEN#"):],
		UserID:    getN(it, "user_id"),
		Kind:      getS(it, "kind"),
		CreatedAt: getTime(it, "created_at").Time,
		ExpiresAt: time.Unix(getN(it, "expires_at"), 0),
		Revoked:   getBool(it, "revoked", false),
	}
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
		switch getS(it, "SK") {
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

// batchGet reads up to 100 items with strongly consistent reads, asking again
// for any keys DynamoDB leaves unprocessed.
func (s *Store) batchGet(ctx context.Context, op string, keys []item) ([]item, error) {
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	var items []item
	err := retry(ctx, op, func() (bool, error) {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return true, dbErr(op, err)
		}
		items = append(items, out.Responses[s.table]...)
		req = out.UnprocessedKeys
		return len(req) == 0, nil
	})
	return items, err
}

// RevokeToken marks one token revoked. It reports false if there is no such token.
func (s *Store) RevokeToken(ctx context.Context, hash string) (bool, error) {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       tokenKey(hash),
		UpdateExpression:          aws.String("SET revoked = :t"),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: item{":t": boolean(true)},
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case asError(err, &ccf):
		return false, nil
	}
	return false, dbErr("revoke token", err)
}

// RevokeUserTokens revokes every token of a user and reports how many it found.
func (s *Store) RevokeUserTokens(ctx context.Context, userID int64) (int, error) {
	n := 0
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 &s.table,
		IndexName:                 aws.String(GSI1),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: item{":pk": str(userTokensPK(userID))},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return n, dbErr("list user tokens", err)
		}
		for _, it := range page.Items {
			if _, err := s.RevokeToken(ctx, tokenFrom(it).Hash); err != nil {
				return n, fmt.Errorf("revoke tokens of user %d: %w", userID, err)
			}
			n++
		}
	}
	return n, nil
}
