package ddbtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/store"
)

// Outbox returns the table's event items (their partition keys begin
// with store.EventPrefix), oldest first (by their ULIDs), read with a
// consistent Scan of the whole table.
func (e *Env) Outbox(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(e.DB, &dynamodb.ScanInput{TableName: aws.String(e.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if strings.HasPrefix(pkOf(it), store.EventPrefix) {
				out = append(out, it)
			}
		}
	}
	slices.SortFunc(out, func(a, b map[string]types.AttributeValue) int { return strings.Compare(pkOf(a), pkOf(b)) })
	return out
}

func pkOf(it map[string]types.AttributeValue) string {
	s, _ := it["PK"].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}
