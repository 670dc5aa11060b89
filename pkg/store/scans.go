package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

// Batching of finding writes: DynamoDB takes 25 items per BatchWriteItem;
// a few batches run at once.
const (
	batchWriteSize  = 25
	writeDecoupling = 4
)

func scanPK(id int64) string { return "SCAN#" + strconv.FormatInt(id, 10) }

// prKey is the PR record's key: its identity (integration, repository,
// number), so the record is its own uniqueness marker.
func prKey(vcID, repoID, number int64) item {
	return key(fmt.Sprintf("PR#%d#%d#%d", vcID, repoID, number), "PR")
}

func findingSK(i int) string { return fmt.Sprintf("FINDING#%04d", i) }

// RecordScan stores a scan with its findings and creates or updates its PR
// record. Findings are written first, in batches; the scan and the PR
// record are then committed in one transaction, so a reader never sees a
// scan without its findings. The first scan of a PR creates the PR record
// under attribute_not_exists; a racing first scan finds it and updates it
// under a version check instead.
func (s *Store) RecordScan(ctx context.Context, ns scangate.NewScan, now time.Time) (scangate.Scan, scangate.PR, error) {
	id, err := s.nextID(ctx, "scan")
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	// Judge the findings by their groups as they are now; if a group
	// changes before the scan is committed, settle it again afterwards.
	protos, at := findingGroups(ns)
	before, err := s.readGroups(ctx, protos)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	suppressed := make([]bool, len(ns.Findings))
	for i, f := range ns.Findings {
		suppressed[i] = before[at[i]].covers(scangate.FindingRef{Type: ns.Type, Name: f.Name, RepoID: ns.RepoID, VcID: ns.VcID})
	}
	if err := s.putFindings(ctx, id, ns, suppressed); err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	sc := scangate.Scan{
		ID: id, PRNumber: ns.PR.Number, VcID: ns.VcID, WebhookID: ns.WebhookID, RepoID: ns.RepoID,
		VcType: ns.VcType, Type: ns.Type, CreatedAt: scangate.At(now), VcName: ns.VcName, RepoName: ns.RepoName,
		Status: ns.Status, OtherDetails: ns.OtherDetails, StatURL: ns.StatURL,
	}
	if len(sc.OtherDetails) == 0 {
		sc.OtherDetails = json.RawMessage("{}")
	}
	sc.SecretCount, sc.VulnerabilityCount = scangate.Counts(ns.Type, suppressed)
	sc.BlockStatus = scangate.Blocks(sc.Status, sc.SecretCount, sc.VulnerabilityCount)

	var pr scangate.PR
	var newPRID int64
	err = retry(ctx, "record scan", func() (bool, error) {
		old, found, err := s.prRecord(ctx, ns.VcID, ns.RepoID, ns.PR.Number)
		if err != nil {
			return true, err
		}
		if !found {
			if newPRID == 0 {
				if newPRID, err = s.nextID(ctx, "pr"); err != nil {
					return true, err
				}
			}
			old = prRecord{PR: scangate.PR{ID: newPRID, Number: ns.PR.Number, RepoID: ns.RepoID, VcID: ns.VcID, WebhookID: ns.WebhookID, CreatedAt: sc.CreatedAt}}
		}
		sc.PRID = old.ID
		next, changed := old.with(sc, ns.PR)
		ver := old.ver
		prItem := item(nil)
		if changed {
			next.ver = ver + 1
			prItem = next.item()
		}
		items := []types.TransactWriteItem{{Put: &types.Put{TableName: &s.table, Item: scanItem(sc), ConditionExpression: aws.String("attribute_not_exists(PK)")}}}
		if prItem != nil {
			put := &types.Put{TableName: &s.table, Item: prItem, ConditionExpression: aws.String("attribute_not_exists(PK)")}
			if found {
				put.ConditionExpression = aws.String("ver = :ver")
				put.ExpressionAttributeValues = item{":ver": num(ver)}
			}
			items = append(items, types.TransactWriteItem{Put: put})
		} else {
			// The PR is unchanged, but it must still exist as read.
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: &s.table, Key: prKey(ns.VcID, ns.RepoID, ns.PR.Number),
				ConditionExpression: aws.String("ver = :ver"), ExpressionAttributeValues: item{":ver": num(ver)},
			}})
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		codes := cancelReasons(err)
		switch {
		case err == nil:
			pr = next.PR
			return true, nil
		case conflicted(codes), len(codes) > 1 && codes[1] == "ConditionalCheckFailed":
			return false, nil
		}
		return true, dbErr("record scan", err)
	})
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	after, err := s.readGroups(ctx, protos)
	if err != nil {
		return scangate.Scan{}, scangate.PR{}, err
	}
	changed := false
	for j, g := range after {
		if g.gv == before[j].gv {
			continue
		}
		changed = true
		var rows []findingRow
		for i, f := range ns.Findings {
			if at[i] == j {
				rows = append(rows, findingRow{key: key(scanPK(id), findingSK(i)), scanID: id,
					ref: scangate.FindingRef{Type: ns.Type, Name: f.Name, RepoID: ns.RepoID, VcID: ns.VcID}, sup: suppressed[i]})
			}
		}
		if err := s.reconcile(ctx, g, rows); err != nil {
			return scangate.Scan{}, scangate.PR{}, err
		}
	}
	if changed {
		return s.Scan(ctx, id)
	}
	return sc, pr, nil
}

// findingGroups returns the distinct groups of a scan's findings and, for
// each finding, the index of its group.
func findingGroups(ns scangate.NewScan) ([]group, []int) {
	var protos []group
	seen := map[string]int{}
	at := make([]int, len(ns.Findings))
	for i, f := range ns.Findings {
		g := groupOf(ns.Type, f.Name)
		j, ok := seen[g.pk()]
		if !ok {
			j = len(protos)
			seen[g.pk()] = j
			protos = append(protos, g)
		}
		at[i] = j
	}
	return protos, at
}

// putFindings writes a scan's findings with bounded parallelism, asking
// again for any items DynamoDB leaves unprocessed.
func (s *Store) putFindings(ctx context.Context, scanID int64, ns scangate.NewScan, suppressed []bool) error {
	var reqs []types.WriteRequest
	for i, f := range ns.Findings {
		it := key(scanPK(scanID), findingSK(i))
		it["type"] = str(string(ns.Type))
		it["name"] = str(f.Name)
		if f.Rule != "" {
			it["rule"] = str(f.Rule)
		}
		if f.Path != "" {
			it["path"] = str(f.Path)
		}
		if f.Line != nil {
			it["line"] = num(*f.Line)
		}
		it["repo_id"] = num(ns.RepoID)
		it["vc_id"] = num(ns.VcID)
		it["sup"] = boolean(suppressed[i])
		it["GSI1PK"] = str(groupOf(ns.Type, f.Name).findings())
		it["GSI1SK"] = str(fmt.Sprintf("%019d#%04d", scanID, i))
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	return s.batchWrite(ctx, "put findings", reqs)
}

// batchWrite writes requests in batches of 25, a few batches at a time.
func (s *Store) batchWrite(ctx context.Context, op string, reqs []types.WriteRequest) error {
	sem := make(chan struct{}, writeDecoupling)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for start := 0; start < len(reqs); start += batchWriteSize {
		batch := reqs[start:min(start+batchWriteSize, len(reqs))]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pending := map[string][]types.WriteRequest{s.table: batch}
			err := retry(ctx, op, func() (bool, error) {
				out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
				if err != nil {
					return true, dbErr(op, err)
				}
				pending = out.UnprocessedItems
				return len(pending) == 0, nil
			})
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}
