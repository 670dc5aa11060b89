package store

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// blockingPage is the most findings one Query of BlockingFindings asks
// for (DynamoDB's 1 MB a page may end one sooner).
const blockingPage = 1000

// BlockingFindings reads the findings that block a gate in the scans
// given (the newest scans its findings reasons name): the first limit of
// them in scangate.CompareBlocking's order (new first, then the most
// severe). It reads the scans one after the other, page by page (one
// strongly consistent Query of their partition each), at most maxRead
// findings in all, and reports whether it stopped there before reading
// every finding of the scans: the findings it returns are then the first
// of those it read. Memory holds at most 2 × limit findings, whatever the
// size of the scans.
func (s *Store) BlockingFindings(ctx context.Context, scans []scangate.BlockingScan, limit, maxRead int) ([]scangate.BlockingFinding, bool, error) {
	var kept []scangate.BlockingFinding
	trim := func() {
		slices.SortFunc(kept, scangate.CompareBlocking)
		kept = kept[:min(len(kept), limit)]
	}
	read := 0
	for order, b := range scans {
		vals := item{":pk": str(scanPK(b.ScanID)), ":prefix": str(findingPrefix)}
		in := &dynamodb.QueryInput{TableName: &s.table, ConsistentRead: aws.Bool(true), ExpressionAttributeValues: vals,
			KeyConditionExpression: aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :prefix)"),
			ProjectionExpression: aws.String(ref(aSK) + ", " + ref(aName) + ", " + ref(aRule) + ", " + ref(aPath) + ", " + ref(aLine) + ", " +
				ref(aSev) + ", " + ref(aSup) + ", " + ref(aBaselineState))}
		in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression, in.ProjectionExpression)
		for {
			if read >= maxRead {
				trim()
				return kept, true, nil
			}
			in.Limit = aws.Int32(int32(min(blockingPage, maxRead-read)))
			out, err := s.db.Query(ctx, in)
			if err != nil {
				return nil, false, dbErr("list blocking findings", err)
			}
			read += len(out.Items)
			for _, it := range out.Items {
				f := recordedFinding(it)
				if b.Blocks(f) {
					kept = append(kept, scangate.BlockingFinding{ScanID: b.ScanID, Type: b.Type, Category: b.Category, Order: order, RecordedFinding: f})
				}
			}
			if len(kept) >= 2*limit {
				trim()
			}
			if out.LastEvaluatedKey == nil {
				break
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	trim()
	return kept, false, nil
}
