package store

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// What GET /pr/{pr_id}/sarif reads: a pull request's newest scans, each
// scan's findings and absent findings a page of DynamoDB at a time (never
// all of them at once), and the allowlists that suppress them.

// PRNewestScans reads a pull request and its newest scan of each (type,
// category), by scan type then category, as GET /pr/scan/{id} has them:
// its id item, its record, then one BatchGetItem of the scans, each
// strongly consistent.
func (s *Store) PRNewestScans(ctx context.Context, prID int64) (scangate.PR, []scangate.Scan, error) {
	r, err := s.prByID(ctx, prID)
	if err != nil {
		return scangate.PR{}, nil, err
	}
	cats := r.categories()
	keys := make([]item, len(cats))
	for i, c := range cats {
		keys[i] = scanKey(c.ScanID)
	}
	items, err := s.batchGetAll(ctx, "get a PR's newest scans", keys)
	if err != nil {
		return scangate.PR{}, nil, err
	}
	byID := map[int64]scangate.Scan{}
	for _, it := range items {
		sc := scanFrom(it)
		byID[sc.ID] = sc
	}
	scans := make([]scangate.Scan, 0, len(cats))
	for _, c := range cats {
		if sc, ok := byID[c.ScanID]; ok {
			scans = append(scans, sc)
		}
	}
	return r.asPR(), scans, nil
}

// WalkFindings hands fn a scan's findings in their order, a page of
// DynamoDB (up to 1 MB) at a time, read strongly consistent.
func (s *Store) WalkFindings(ctx context.Context, scanID int64, fn func([]scangate.RecordedFinding) error) error {
	return s.walkScan(ctx, "read a scan's findings", scanID, findingPrefix, func(page []item) error {
		fs := make([]scangate.RecordedFinding, 0, len(page))
		for _, it := range page {
			fs = append(fs, recordedFinding(it))
		}
		return fn(fs)
	})
}

// WalkAbsent hands fn the findings of a pull request's scan's baseline
// (sc.Class.BaselineScanID) that the scan does not have (GET
// /pr/{pr_id}/sarif), in the baseline's order, a page of DynamoDB at a
// time: only that baseline's ABSENT items, not those of a baseline the
// scan had before (retired, until their ttl) or of a switch cancelled.
func (s *Store) WalkAbsent(ctx context.Context, sc scangate.Scan, fn func([]scangate.AbsentFinding) error) error {
	return s.walkScan(ctx, "read a scan's absent findings", sc.ID, absentPrefix(sc.Class.BaselineScanID), func(page []item) error {
		fs := make([]scangate.AbsentFinding, 0, len(page))
		for _, it := range page {
			fs = append(fs, absentFrom(sc.Type, sc.Category, sc.ID, it))
		}
		return fn(fs)
	})
}

func (s *Store) walkScan(ctx context.Context, op string, scanID int64, prefix string, fn func([]item) error) error {
	return s.queryPages(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :p)"),
		ExpressionAttributeValues: item{":pk": str(scanPK(scanID)), ":p": str(prefix)},
		ConsistentRead:            aws.Bool(true),
	}, fn)
}

// AllowlistsByID reads allowlists by id (those that exist), in batches of
// BatchGetItem, strongly consistent.
func (s *Store) AllowlistsByID(ctx context.Context, ids []int64) (map[int64]scangate.Allowlist, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	keys := make([]item, len(ids))
	for i, id := range ids {
		keys[i] = allowKey(id)
	}
	items, err := s.batchGetAll(ctx, "get allowlists", keys)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]scangate.Allowlist, len(items))
	for _, it := range items {
		a, _ := allowFrom(it)
		out[a.ID] = a
	}
	return out, nil
}
