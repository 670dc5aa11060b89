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

	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

// GateChanges reads the outbox's pr.gate_changed events of a table (a
// consistent Scan), by PR id, each PR's in the order of their sequences.
func GateChanges(t testing.TB, db *dynamodb.Client, table string) map[int64][]scangate.GateChange {
	t.Helper()
	out := map[int64][]scangate.GateChange{}
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			typ, _ := it["type"].(*types.AttributeValueMemberS)
			data, _ := it["data"].(*types.AttributeValueMemberS)
			if pk == nil || !strings.HasPrefix(pk.Value, store.EventPrefix) || typ == nil || typ.Value != scangate.EventGateChanged || data == nil {
				continue
			}
			var g scangate.GateChange
			if err := json.Unmarshal([]byte(data.Value), &g); err != nil {
				t.Fatal(err)
			}
			out[g.PRID] = append(out[g.PRID], g)
		}
	}
	for _, gs := range out {
		slices.SortFunc(gs, func(a, b scangate.GateChange) int { return int(a.Sequence - b.Sequence) })
	}
	return out
}
