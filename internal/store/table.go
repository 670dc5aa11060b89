package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// GSI1 is the table's sparse global secondary index. It projects keys
// only: whoever queries it reads the items themselves, strongly
// consistent, and updates of other attributes cost it nothing.
const GSI1 = "GSI1"

// GSI2 and GSI3 hold listings in an order (all PRs by last scan; one
// repository's PRs by last scan; ...), projecting whole items so that a
// page is one query.
const (
	GSI2 = "GSI2"
	GSI3 = "GSI3"
)

// TableCreator is what creating the table needs.
type TableCreator interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// CreateTable creates the table as template.yaml declares it (keys, index,
// on-demand billing) and waits until it is active. It does nothing if the
// table exists. Deployed tables come from the SAM template, which also sets
// TTL, recovery and protection; this is for local and test endpoints.
func CreateTable(ctx context.Context, db TableCreator, table string) error {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	ks := func(h, r string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(h), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(r), KeyType: types.KeyTypeRange},
		}
	}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &table,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s(aPK), s(aSK), s(aGSI1PK), s(aGSI1SK), s(aGSI2PK), s(aGSI2SK), s(aGSI3PK), s(aGSI3SK)},
		KeySchema:            ks(aPK, aSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String(GSI1), KeySchema: ks(aGSI1PK, aGSI1SK), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
			{IndexName: aws.String(GSI2), KeySchema: ks(aGSI2PK, aGSI2SK), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String(GSI3), KeySchema: ks(aGSI3PK, aGSI3SK), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
		},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	return waitActive(ctx, db, table)
}

// waitActive polls until the table and its indexes are active.
func waitActive(ctx context.Context, db TableCreator, table string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", table, err)
		}
		active := out.Table.TableStatus == types.TableStatusActive || out.Table.TableStatus == ""
		for _, g := range out.Table.GlobalSecondaryIndexes {
			active = active && (g.IndexStatus == "" || g.IndexStatus == types.IndexStatusActive)
		}
		if active {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("table %s is still %s after a minute", table, out.Table.TableStatus)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
