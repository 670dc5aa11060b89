package store

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// Durable work (internal/queue/work) is kept as a work item and one marker per step
// done:
//
//	WORK#<id> / WORK        kind, params, steps, plan, layout, fanout, status, lease, created_at, completed_at, totals
//	                        GSI1: WORKQ / <created_at>#<id> while it runs (a sparse index)
//	WORK#<id> / STEP#<n>    the step's result, written once
//
// The item is written in the transaction of the change that needs the
// work (workItem), so that the change never commits without it. The
// scheduled function queries WORKQ for items whose lease has run out.

// workQueuePK is the GSI1 partition of running work.
const workQueuePK = "WORKQ"

// workRetention is how long a work item and its markers are kept after
// it was created (the table's TTL): far beyond any run.
const workRetention = 30 * 24 * time.Hour

// Attributes of work items.
const (
	aWorkKind   = "kind"
	aParams     = "params"
	aSteps      = "steps"
	aPlan       = "plan"
	aLayout     = "layout"
	aFanOut     = "fanout"
	aTotals     = "totals"
	aStepResult = "result"
)

func workPK(id int64) string { return "WORK#" + strconv.FormatInt(id, 10) }

func workKey(id int64) item { return key(workPK(id), "WORK") }

func stepSK(n int) string { return fmt.Sprintf("STEP#%06d", n) }

// lWork labels a work item in the transaction that writes it.
const lWork = "work"

// newWork makes the item of a new piece of work, held by its writer until
// lease (epoch ms), to put in the transaction of the change.
func newWork(id int64, kind string, params any, now time.Time, lease int64) (work.Item, item, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return work.Item{}, nil, fmt.Errorf("encode work parameters: %w", err)
	}
	at := scangate.At(now)
	w := work.Item{ID: id, Kind: kind, Params: p, Steps: -1, Status: work.Running, Lease: lease, CreatedAt: at.Time}
	it := workKey(id)
	it[aID] = num(id)
	it[aWorkKind] = str(kind)
	it[aParams] = str(string(p))
	it[aStatus] = str(work.Running)
	it[aLease] = num(lease)
	it[aCreatedAt] = str(at.String())
	it[aTTL] = num(now.Add(workRetention).Unix())
	it[aGSI1PK], it[aGSI1SK] = str(workQueuePK), str(at.String()+"#"+fmt.Sprintf("%019d", id))
	return w, it, nil
}

// putWork adds a new piece of work to the transaction of its change.
func putWork(t *tx, id int64, kind string, params any, now time.Time, lease int64) (work.Item, error) {
	w, it, err := newWork(id, kind, params, now, lease)
	if err != nil {
		return work.Item{}, err
	}
	t.put(lWork, it, when("attribute_not_exists("+ref(aPK)+")"))
	return w, nil
}

func workFrom(it item) work.Item {
	w := work.Item{ID: getN(it, aID), Kind: getS(it, aWorkKind), Params: json.RawMessage(getS(it, aParams)),
		Steps: -1, Status: getS(it, aStatus), Lease: getN(it, aLease), CreatedAt: getTime(it, aCreatedAt).Time}
	if _, ok := it[aSteps].(*types.AttributeValueMemberN); ok {
		w.Steps = int(getN(it, aSteps))
	}
	_ = json.Unmarshal([]byte(getS(it, aPlan)), &w.Planned) // written by PlanWork
	if l := getS(it, aLayout); l != "" {
		w.Layout = json.RawMessage(l)
	}
	w.FanOut = getBool(it, aFanOut, false)
	if getS(it, aCompletedAt) != "" {
		w.CompletedAt = getTime(it, aCompletedAt).Time
		_ = json.Unmarshal([]byte(getS(it, aTotals)), &w.Totals) // written by CompleteWork
	}
	return w
}

// WorkItem reads a work item.
func (s *Store) WorkItem(ctx context.Context, id int64) (work.Item, error) {
	it, err := s.getItem(ctx, "get work", workKey(id))
	if err != nil {
		return work.Item{}, err
	}
	if it == nil {
		return work.Item{}, scangate.Errorf(scangate.KindNotFound, "no work has the id %d", id)
	}
	return workFrom(it), nil
}

// ClaimWork takes a running item whose lease has run out.
func (s *Store) ClaimWork(ctx context.Context, id int64, now time.Time, lease int64) (work.Item, bool, error) {
	out, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       workKey(id),
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :lease"),
		ConditionExpression:       aws.String(ref(aStatus) + " = :running AND " + ref(aLease) + " < :now"),
		ExpressionAttributeValues: item{":lease": num(lease), ":running": str(work.Running), ":now": num(now.UnixMilli())},
		ReturnValues:              types.ReturnValueAllNew,
	})
	switch {
	case conditionFailed(err):
		return work.Item{}, false, nil
	case err != nil:
		return work.Item{}, false, dbErr("claim work", err)
	}
	return workFrom(out.Attributes), true, nil
}

// RenewWork moves the lease of an item from held to next.
func (s *Store) RenewWork(ctx context.Context, id, held, next int64) (bool, error) {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       workKey(id),
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :next"),
		ConditionExpression:       aws.String(ref(aLease) + " = :held"),
		ExpressionAttributeValues: item{":next": num(next), ":held": num(held)},
	})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, dbErr("renew work", err)
	}
	return true, nil
}

// PlanWork sets an item's plan, once.
func (s *Store) PlanWork(ctx context.Context, id int64, p work.Plan) (work.Item, error) {
	planned, err := json.Marshal(p.Planned)
	if err != nil {
		return work.Item{}, fmt.Errorf("encode work plan: %w", err)
	}
	layout := p.Layout
	if len(layout) == 0 {
		layout = json.RawMessage("null")
	}
	out, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: workKey(id),
		UpdateExpression: aws.String("SET " + ref(aSteps) + " = :steps, " + ref(aPlan) + " = :plan, " + ref(aLayout) + " = :layout, " +
			ref(aFanOut) + " = :fanout"),
		ConditionExpression: aws.String("attribute_exists(" + ref(aPK) + ") AND attribute_not_exists(" + ref(aSteps) + ")"),
		ExpressionAttributeValues: item{":steps": num(int64(p.Steps)), ":plan": str(string(planned)), ":layout": str(string(layout)),
			":fanout": boolean(p.FanOut)},
		ReturnValues: types.ReturnValueAllNew,
	})
	switch {
	case conditionFailed(err): // planned already (or gone): its own plan stands
		return s.WorkItem(ctx, id)
	case err != nil:
		return work.Item{}, dbErr("plan work", err)
	}
	return workFrom(out.Attributes), nil
}

// ExtendWork moves a running item's lease forward to until, unless it is
// later already.
func (s *Store) ExtendWork(ctx context.Context, id, until int64) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       workKey(id),
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :until"),
		ConditionExpression:       aws.String(ref(aStatus) + " = :running AND " + ref(aLease) + " < :until"),
		ExpressionAttributeValues: item{":until": num(until), ":running": str(work.Running)},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("extend work", err)
	}
	return nil
}

// StepsDone reads the markers of an item's steps.
func (s *Store) StepsDone(ctx context.Context, id int64) (map[int]work.Result, error) {
	items, err := s.queryAll(ctx, "list work steps", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :step)"),
		ExpressionAttributeValues: item{":pk": str(workPK(id)), ":step": str("STEP#")},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	done := map[int]work.Result{}
	for _, it := range items {
		n, _ := strconv.Atoi(strings.TrimPrefix(getS(it, aSK), "STEP#"))
		r := work.Result{}
		_ = json.Unmarshal([]byte(getS(it, aStepResult)), &r) // written by FinishStep
		done[n] = r
	}
	return done, nil
}

// FinishStep writes a step's marker unless it exists.
func (s *Store) FinishStep(ctx context.Context, id int64, n int, r work.Result, now time.Time) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode step result: %w", err)
	}
	it := key(workPK(id), stepSK(n))
	it[aStepResult], it[aCreatedAt], it[aTTL] = str(string(b)), str(scangate.At(now).String()), num(now.Add(workRetention).Unix())
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it,
		ConditionExpression: aws.String("attribute_not_exists(" + ref(aPK) + ")"), ExpressionAttributeNames: namesOf(aws.String(ref(aPK)))})
	if err != nil && !conditionFailed(err) {
		return dbErr("finish work step", err)
	}
	return nil
}

// CompleteWork marks a running item complete and takes it out of the
// queue of running work. The item is put whole (the embedded server
// ignores REMOVE of a top-level attribute), conditioned on its status.
func (s *Store) CompleteWork(ctx context.Context, id int64, totals work.Result, now time.Time) (bool, error) {
	it, err := s.getItem(ctx, "get work", workKey(id))
	if err != nil || it == nil || getS(it, aStatus) != work.Running {
		return false, err
	}
	b, err := json.Marshal(totals)
	if err != nil {
		return false, fmt.Errorf("encode work totals: %w", err)
	}
	delete(it, aGSI1PK)
	delete(it, aGSI1SK)
	it[aStatus], it[aLease], it[aTotals], it[aCompletedAt] = str(work.Complete), num(0), str(string(b)), str(scangate.At(now).String())
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it,
		ConditionExpression:       aws.String(ref(aStatus) + " = :running"),
		ExpressionAttributeNames:  namesOf(aws.String(ref(aStatus))),
		ExpressionAttributeValues: item{":running": str(work.Running)}})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, dbErr("complete work", err)
	}
	return true, nil
}

// DueWork lists the running items whose lease has run out: the WORKQ
// partition of GSI1 (keys only), then the items themselves.
func (s *Store) DueWork(ctx context.Context, now time.Time) ([]int64, error) {
	items, err := s.runningWork(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	var running []work.Item
	for _, it := range items {
		if getS(it, aStatus) == work.Running {
			running = append(running, workFrom(it))
			if getN(it, aLease) < now.UnixMilli() {
				ids = append(ids, getN(it, aID))
			}
		}
	}
	s.measureBacklog(ctx, running, now)
	return ids, nil
}

// measureBacklog emits the backlog of durable work the scheduled function
// sees each minute: how many items are pending and the age of the oldest,
// in all (0 and 0 when none, so an alarm on age always has data) and by
// kind.
func (s *Store) measureBacklog(ctx context.Context, running []work.Item, now time.Time) {
	if s.metrics == nil {
		return
	}
	type backlog struct {
		n      int
		oldest time.Time
	}
	all, kinds := backlog{oldest: now}, map[string]*backlog{}
	for _, w := range running {
		k := kinds[w.Kind]
		if k == nil {
			k = &backlog{oldest: now}
			kinds[w.Kind] = k
		}
		for _, b := range []*backlog{&all, k} {
			b.n++
			if w.CreatedAt.Before(b.oldest) {
				b.oldest = w.CreatedAt
			}
		}
	}
	emit := func(dims []metrics.Dim, b backlog) {
		s.metrics.Emit(ctx, dims, metrics.CountOf(metrics.WorkPending, b.n),
			metrics.Metric{Name: metrics.WorkOldestAge, Unit: metrics.Seconds, Value: now.Sub(b.oldest).Seconds()})
	}
	emit(nil, all)
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		emit([]metrics.Dim{{Name: metrics.DimKind, Value: kind}}, *kinds[kind])
	}
}

// runningWork reads the items of the queue of running work.
func (s *Store) runningWork(ctx context.Context) ([]item, error) {
	entries, err := s.queryAll(ctx, "list running work", &dynamodb.QueryInput{
		IndexName:                 aws.String(GSI1),
		KeyConditionExpression:    aws.String(ref(aGSI1PK) + " = :pk"),
		ExpressionAttributeValues: item{":pk": str(workQueuePK)},
	})
	if err != nil {
		return nil, err
	}
	return s.readKeys(ctx, "get running work", entries)
}

// RunningWork lists the work items still running (scangate-admin check
// reports them instead of the drift they will correct).
func (s *Store) RunningWork(ctx context.Context) ([]work.Item, error) {
	items, err := s.runningWork(ctx)
	if err != nil {
		return nil, err
	}
	var out []work.Item
	for _, it := range items {
		if w := workFrom(it); w.Status == work.Running {
			out = append(out, w)
		}
	}
	return out, nil
}
