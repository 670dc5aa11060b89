package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/scangate"
)

// TestTokenNamesKeptByTheEarlierRuleStillCount: a registry entry whose
// name was kept by the earlier rule (each character as the least of its
// simple case folding orbit: straße as STRAßE) still takes the name under
// the rules of e-mail addresses: STRASSE is refused, another name is not.
func TestTokenNamesKeptByTheEarlierRuleStillCount(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	expires := time.Now().Add(24 * time.Hour).Unix()
	_, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "USER#1"}, "SK": &types.AttributeValueMemberS{Value: "TOKENS"},
		"ver": &types.AttributeValueMemberN{Value: "1"},
		"p": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"5": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"n": &types.AttributeValueMemberS{Value: "STRAßE"}, "e": &types.AttributeValueMemberN{Value: strconv.FormatInt(expires, 10)}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok := func(id int64, name string) scangate.Token {
		return scangate.Token{ID: id, Hash: "h" + strconv.FormatInt(id, 10), UserID: 1, Kind: scangate.TokenPersonal, Name: name, Scope: scangate.ScopeWrite,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	if err := env.Store.CreatePersonalToken(ctx, tok(6, "STRASSE"), emailfold.Fold, scangate.Who{RequestID: "t"}); scangate.KindOf(err) != scangate.KindConflict {
		t.Errorf("STRASSE beside a kept STRAßE: %v; want a conflict", err)
	}
	if err := env.Store.CreatePersonalToken(ctx, tok(7, "strasse-2"), emailfold.Fold, scangate.Who{RequestID: "t"}); err != nil {
		t.Errorf("another name: %v", err)
	}
}
