package ddbtest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// Outbox returns the table's event items (their partition keys begin
// with store.EventPrefix), oldest first (by their ULIDs), read with a
// consistent Scan of the whole table.
func (e *Env) Outbox(t testing.TB) []map[string]types.AttributeValue {
	t.Helper()
	return Outbox(t, e.DB, e.Table)
}

// Outbox is Env.Outbox of any table (one a test made on DynamoDB Local).
func Outbox(t testing.TB, db *dynamodb.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
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

// GateChanges are the pr.gate_changed events of a table (Outbox), by PR
// id, each PR's in the order of their sequences.
func GateChanges(t testing.TB, db *dynamodb.Client, table string) map[int64][]scangate.GateChange {
	t.Helper()
	out := map[int64][]scangate.GateChange{}
	for _, it := range Outbox(t, db, table) {
		typ, _ := it["type"].(*types.AttributeValueMemberS)
		data, _ := it["data"].(*types.AttributeValueMemberS)
		if typ == nil || typ.Value != scangate.EventGateChanged || data == nil {
			continue
		}
		var g scangate.GateChange
		if err := json.Unmarshal([]byte(data.Value), &g); err != nil {
			t.Fatal(err)
		}
		out[g.PRID] = append(out[g.PRID], g)
	}
	for _, gs := range out {
		slices.SortFunc(gs, func(a, b scangate.GateChange) int { return int(a.Sequence - b.Sequence) })
	}
	return out
}
