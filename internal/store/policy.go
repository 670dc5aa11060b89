package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// The gate policy is one partition:
//
//	POLICY / GLOBAL        policy (JSON), pv (the policy version), updated_at, updated_by
//	POLICY / REPO#<repo>   policy (JSON, the repository's override), updated_at, updated_by
//
// Every change, global or of a repository, moves pv in its transaction,
// with the work item that re-judges every pull request (kind policy) and
// the audit entry. No recording or re-evaluation conditions on these
// items (DynamoDB would cancel concurrent transactions that include one);
// instead each reads the policy before it judges, and the version again
// after it commits, and judges again what it wrote if the version moved
// (the handshake: docs/DATA.md).

const policyPK = KeyPolicy

func globalPolicyKey() item { return key(policyPK, "GLOBAL") }

func repoPolicyKey(repo int64) item { return key(policyPK, "REPO#"+strconv.FormatInt(repo, 10)) }

// Labels of a policy change's transaction.
const (
	lGlobalPolicy = "global policy"
	lRepoPolicy   = "repository policy"
)

// policies is a snapshot of the gate policy: its version, the global
// policy and the overrides of some repositories.
type policies struct {
	pv     int64
	global scangate.Policy
	repos  map[int64]*scangate.PolicyOverride
	items  map[string]item // the items read, by sort key
}

func (p policies) effective(repo int64) scangate.Policy { return p.global.With(p.repos[repo]) }

// readPolicies reads the global policy and the overrides of repos as one
// snapshot: one TransactGetItems (a BatchGetItem could read a
// repository's override before a change and the version after it). Past
// 100 items, the global item first, then the overrides: an override read
// after the version is as new as it, or newer, which the handshake's
// second read of the version then finds moved.
func (s *Store) readPolicies(ctx context.Context, repos []int64) (policies, error) {
	keys := []item{globalPolicyKey()}
	for _, r := range repos {
		if k := repoPolicyKey(r); !slices.ContainsFunc(keys, func(o item) bool { return keyString(o) == keyString(k) }) {
			keys = append(keys, k)
		}
	}
	var items []item
	var err error
	if len(keys) <= txMaxItems {
		items, err = s.transactGet(ctx, "read gate policy", keys)
	} else {
		var g item
		if g, err = s.getItem(ctx, "read gate policy", keys[0]); err == nil {
			items, err = s.batchGetAll(ctx, "read gate policies", keys[1:])
			items = append(items, g)
		}
	}
	if err != nil {
		return policies{}, err
	}
	p := policies{global: scangate.DefaultPolicy(), repos: map[int64]*scangate.PolicyOverride{}, items: map[string]item{}}
	for _, it := range items {
		if it == nil {
			continue
		}
		sk := getS(it, aSK)
		p.items[sk] = it
		if sk == "GLOBAL" {
			p.pv = getN(it, aPolicyVer)
			if err := json.Unmarshal([]byte(getS(it, aPolicy)), &p.global); err != nil {
				return policies{}, fmt.Errorf("read the global gate policy: %w", err)
			}
			continue
		}
		repo, _ := strconv.ParseInt(sk[len("REPO#"):], 10, 64)
		var o scangate.PolicyOverride
		if err := json.Unmarshal([]byte(getS(it, aPolicy)), &o); err != nil {
			return policies{}, fmt.Errorf("read the gate policy of repository %d: %w", repo, err)
		}
		p.repos[repo] = &o
	}
	return p, nil
}

// transactGet reads items as one snapshot (TransactGetItems, at most 100
// keys), in the order of keys, nil for an item that does not exist. A read
// that meets a transaction writing one of them is cancelled by DynamoDB,
// and tried again.
func (s *Store) transactGet(ctx context.Context, op string, keys []item) ([]item, error) {
	in := &dynamodb.TransactGetItemsInput{}
	for _, k := range keys {
		in.TransactItems = append(in.TransactItems, types.TransactGetItem{Get: &types.Get{TableName: &s.table, Key: k}})
	}
	var out []item
	err := s.retry.Do(ctx, op, func(int) (bool, error) {
		res, err := s.db.TransactGetItems(ctx, in)
		var tce *types.TransactionCanceledException
		switch {
		case errors.As(err, &tce):
			return false, nil
		case err != nil:
			return true, dbErr(op, err)
		}
		out = make([]item, len(keys))
		for i, r := range res.Responses {
			if i < len(out) && len(r.Item) > 0 {
				out[i] = r.Item
			}
		}
		return true, nil
	})
	return out, err
}

// policyVersion reads the policy version, strongly consistent.
func (s *Store) policyVersion(ctx context.Context) (int64, error) {
	it, err := s.getItem(ctx, "read gate policy version", globalPolicyKey())
	return getN(it, aPolicyVer), err
}

// storedPolicy is the stored form of the global policy or of a
// repository's.
func storedPolicy(p policies, repo int64) scangate.StoredPolicy {
	sp := scangate.StoredPolicy{RepoID: repo, Global: p.global, Override: p.repos[repo], Version: p.pv}
	sk := "GLOBAL"
	if repo != 0 {
		sk = "REPO#" + strconv.FormatInt(repo, 10)
	}
	if it, ok := p.items[sk]; ok {
		at := getTime(it, aUpdatedAt)
		by := getN(it, aUpdatedBy)
		sp.UpdatedAt, sp.UpdatedBy = &at, &by
	}
	return sp
}

// GatePolicy reads the global policy (repo 0) or a repository's, with the
// global one it overrides: one TransactGetItems.
func (s *Store) GatePolicy(ctx context.Context, repo int64) (scangate.StoredPolicy, error) {
	var repos []int64
	if repo != 0 {
		repos = []int64{repo}
	}
	p, err := s.readPolicies(ctx, repos)
	if err != nil {
		return scangate.StoredPolicy{}, err
	}
	return storedPolicy(p, repo), nil
}

// KindPolicy is the kind of the work that re-judges every pull request
// after a policy change.
const KindPolicy = scangate.WorkPolicy

// policyParams are the parameters of a policy work item: the version of
// the change that wrote it.
type policyParams struct {
	Version int64 `json:"pv"`
}

// SetGatePolicy makes a policy change: in one transaction, the global
// item with its version moved (and the global policy when c sets it), the
// repository's override put or deleted, the work item that re-judges
// every pull request (held by the caller until lease), and the
// gate.policy.update audit entry. It returns the policy as stored and the
// work item, which the caller then runs (work.Runner.Continue).
func (s *Store) SetGatePolicy(ctx context.Context, c scangate.PolicyChange, who scangate.Who, now time.Time, lease int64) (scangate.StoredPolicy, work.Item, error) {
	id, err := s.nextID(ctx, "work")
	if err != nil {
		return scangate.StoredPolicy{}, work.Item{}, err
	}
	var out scangate.StoredPolicy
	var w work.Item
	err = s.retry.Do(ctx, "set gate policy", func(int) (bool, error) {
		var repos []int64
		if c.RepoID != 0 {
			repos = []int64{c.RepoID}
		}
		cur, err := s.readPolicies(ctx, repos)
		if err != nil {
			return true, err
		}
		next := cur
		next.pv, next.repos = cur.pv+1, map[int64]*scangate.PolicyOverride{}
		if c.RepoID == 0 {
			next.global = c.Global
		} else {
			next.repos[c.RepoID] = c.Override
		}
		t, item, err := s.policyTx(cur, next, c, id, who, now, lease)
		if err != nil {
			return true, err
		}
		err = s.commit(ctx, "set gate policy", t)
		if lostRace(err, lGlobalPolicy) {
			return false, nil
		}
		if err == nil {
			at, by := scangate.At(now), actorID(who)
			out = storedPolicy(next, c.RepoID)
			out.UpdatedAt, out.UpdatedBy = &at, &by
			w = item
		}
		return true, err
	})
	return out, w, err
}

// policyTx builds a policy change's transaction from the policy as read
// (cur) to the policy as changed (next).
func (s *Store) policyTx(cur, next policies, c scangate.PolicyChange, workID int64, who scangate.Who, now time.Time, lease int64) (*tx, work.Item, error) {
	t := s.newTx()
	at, by := scangate.At(now).String(), actorID(who)
	g, err := json.Marshal(next.global)
	if err != nil {
		return nil, work.Item{}, err
	}
	global := merge(globalPolicyKey(), item{aPolicy: str(string(g)), aPolicyVer: num(next.pv)})
	onGlobal := when("attribute_not_exists(" + ref(aPK) + ")")
	if old, ok := cur.items["GLOBAL"]; ok {
		onGlobal = when(ref(aPolicyVer)+" = :pv", ":pv", num(cur.pv))
		global[aUpdatedAt], global[aUpdatedBy] = old[aUpdatedAt], old[aUpdatedBy]
	}
	target := scangate.Target{Type: "gate_policy", ID: "global"}
	var changes scangate.Changes
	if c.RepoID == 0 {
		global[aUpdatedAt], global[aUpdatedBy] = str(at), num(by)
		changes = policyChanges(cur.global, next.global, nil, nil)
	} else {
		target.ID = strconv.FormatInt(c.RepoID, 10)
		changes = policyChanges(cur.global, cur.global, cur.repos[c.RepoID], next.repos[c.RepoID])
		if o := next.repos[c.RepoID]; o != nil {
			b, err := json.Marshal(o)
			if err != nil {
				return nil, work.Item{}, err
			}
			t.put(lRepoPolicy, merge(repoPolicyKey(c.RepoID), item{aPolicy: str(string(b)), aUpdatedAt: str(at), aUpdatedBy: num(by)}), nil)
		} else {
			t.del(lRepoPolicy, repoPolicyKey(c.RepoID), nil)
		}
	}
	if global[aUpdatedAt] == nil {
		delete(global, aUpdatedAt)
		delete(global, aUpdatedBy)
	}
	t.put(lGlobalPolicy, global, onGlobal)
	w, err := putWork(t, workID, KindPolicy, policyParams{Version: next.pv}, now, lease)
	if err != nil {
		return nil, work.Item{}, err
	}
	s.addAudit(t, scangate.NewAudit(scangate.AuditPolicyUpdate, who, target, changes, now))
	return t, w, nil
}

// policyChanges are the audited members of a policy change: the
// effective members that changed, and for a repository whether it has
// an override.
func policyChanges(oldGlobal, newGlobal scangate.Policy, oldRepo, newRepo *scangate.PolicyOverride) scangate.Changes {
	c := scangate.Changes{}
	was, is := oldGlobal.With(oldRepo), newGlobal.With(newRepo)
	set := func(name string, from, to any) {
		a, _ := json.Marshal(from)
		b, _ := json.Marshal(to)
		if string(a) != string(b) {
			c[name] = scangate.Change{From: from, To: to}
		}
	}
	set("block_severity", was.BlockSeverity, is.BlockSeverity)
	set("required", was.Required, is.Required)
	set("block_on_missing", was.BlockOnMissing, is.BlockOnMissing)
	set("block_on", was.BlockOn, is.BlockOn)
	if (oldRepo == nil) != (newRepo == nil) {
		c["override"] = scangate.Change{From: oldRepo != nil, To: newRepo != nil}
	}
	return c
}

// WorkLease is the lease of durable work, both held and dispatched
// (WithWorkLease).
func (s *Store) WorkLease() time.Duration { return s.workLease }

// PolicyWork is the kind of durable work that re-judges every pull
// request after a gate policy change (scangate.WorkPolicy).
func (s *Store) PolicyWork(now func() time.Time) work.Kind { return policyWork{s: s, now: now} }

// ReevalWork is the kind of durable work that re-evaluates an allowlist's
// findings after a change (cause scangate.CauseAllowlist) or an expiry
// (scangate.CauseExpiry).
func (s *Store) ReevalWork(now func() time.Time, cause string) work.Kind {
	return reevalWork{s: s, now: now, cause: cause}
}

// BaselineWork is the kind of durable work that re-classifies the pull
// requests based on a branch whose newest completed scan of a category
// changed.
func (s *Store) BaselineWork(now func() time.Time) work.Kind {
	return baselineWork{s: s, now: now}
}

// baselineRunner runs, within a recording, the re-classification work it
// wrote (the one kind a recording starts; the registry of every kind is
// usecase.Runner).
func (s *Store) baselineRunner(now func() time.Time) work.Runner {
	return work.Runner{Store: s, Now: now, Lease: s.workLease, DispatchLease: s.workLease,
		Kinds: map[string]work.Kind{KindBaseline: s.BaselineWork(now)}}
}

// policyRange is how many PR ids one step of a policy's work re-judges.
const policyRange = 50

// policyWork re-judges every pull request written before a policy change:
// the PR ids from 1 to the PR counter as read after the change committed
// (an index could miss a PR created a moment ago; the counter cannot), in
// ranges of policyRange, gaps skipped.
type policyWork struct {
	s   *Store
	now func() time.Time
}

// Plan reads the PR counter: the PRs to re-judge.
func (p policyWork) Plan(ctx context.Context, _ work.Item) (work.Plan, error) {
	it, err := p.s.getItem(ctx, "read PR counter", key(KeyCounter+"pr", "COUNTER"))
	if err != nil {
		return work.Plan{}, err
	}
	n := getN(it, aN)
	return work.Plan{Steps: int((n + policyRange - 1) / policyRange), Planned: work.Result{"prs": n}}, nil
}

// Step re-judges the PRs of one range of ids.
func (p policyWork) Step(ctx context.Context, it work.Item, n int) (work.Result, error) {
	from := int64(n)*policyRange + 1
	to := min(from+policyRange-1, it.Planned["prs"])
	var keys []item
	for id := from; id <= to; id++ {
		keys = append(keys, prIDKey(id))
	}
	ids, err := p.s.batchGetAll(ctx, "get PR ids", keys)
	if err != nil {
		return nil, err
	}
	keys = keys[:0]
	for _, it := range ids {
		keys = append(keys, prKey(getN(it, aVcID), getN(it, aRepoID), getN(it, aPRNumber)))
	}
	res, err := p.s.rejudge(ctx, keys, p.now())
	return work.Result(res), err
}
