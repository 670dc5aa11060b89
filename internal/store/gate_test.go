package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// severePRs records n pull requests (repo 1, numbers 1 to n), each with
// one completed VULNERABILITY scan: a medium finding on even numbers, a
// critical one on odd numbers. Under block_severity high the even ones
// do not block.
func severePRs(t *testing.T, env *ddbtest.Env, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		ns := vulnScan(1, "CVE-1")
		ns.PR.Number = int64(i)
		ns.Findings[0].Severity = scangate.SeverityCritical
		if i%2 == 0 {
			ns.Findings[0].Severity = scangate.SeverityMedium
		}
		if _, _, err := env.Store.RecordScan(context.Background(), ns, testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

var highOnly = scangate.PolicyChange{Global: scangate.DefaultPolicy().With(&scangate.PolicyOverride{
	BlockSeverity: map[scangate.ScanType]scangate.Severity{scangate.ScanVulnerability: scangate.SeverityHigh}})}

// blockedPRs reads which of PRs 1 to n the listing's stored decision
// shows blocked.
func blockedPRs(t *testing.T, env *ddbtest.Env, n int) []int64 {
	t.Helper()
	var out []int64
	for id := int64(1); id <= int64(n); id++ {
		g, err := env.Store.PRGate(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if g.Gate.Blocked {
			out = append(out, id)
		}
	}
	return out
}

// TestPolicyRejudgeResumesAfterKill: the work a policy change leaves is
// killed midway (its context cancelled after its first step); the gates
// of the PRs it had not reached are wrong (check lists them as pending,
// with the work still running, not as drift), and the scheduled function
// completes it: no wrong gate is left, the step done before is not done
// again, and the totals are exact.
func TestPolicyRejudgeResumesAfterKill(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	severePRs(t, env, 120) // three steps of 50 ids
	ctx := context.Background()
	run := env.Store.Runner(time.Now, nil)
	at := time.Now()
	_, it, err := env.Store.SetGatePolicy(ctx, highOnly, testWho, at, run.LeaseFrom(at))
	if err != nil {
		t.Fatal(err)
	}
	killed, kill := context.WithCancel(ctx)
	markers := 0
	hook := func(op string) {
		switch {
		case op == "PutItem": // a step's marker
			markers++
		case op == "UpdateItem" && markers == 1: // the lease's renewal after the first step
			kill()
		}
	}
	env.Hook.Store(&hook)
	it, err = run.Continue(killed, it)
	env.Hook.Store(nil)
	if !errors.Is(err, context.Canceled) || it.Status != work.Running || it.Steps != 3 {
		t.Fatalf("the killed run: %+v %v", it, err)
	}
	rep, err := env.Store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Drift) > 0 || len(rep.Running) != 1 || len(rep.Pending) == 0 {
		t.Fatalf("check after the kill: drift %v, running %v, %d pending", rep.Drift, rep.Running, len(rep.Pending))
	}
	if got := len(blockedPRs(t, env, 120)); got == 60 || got == 120 {
		t.Fatalf("%d PRs blocked after the kill: the kill did not stop the work midway", got)
	}
	// The scheduled function resumes it at once: the run gave its lease up.
	n, err := run.Resume(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("resume: %d %v", n, err)
	}
	done, err := env.Store.WorkItem(ctx, it.ID)
	if err != nil || done.Status != work.Complete || done.Totals["prs"] != 120 || done.Totals["written"] != 120 || done.Totals["changed"] != 60 {
		t.Errorf("the work: %+v %v; want 120 PRs judged, their gates written (a new policy), 60 decisions changed", done, err)
	}
	if got := blockedPRs(t, env, 120); len(got) != 60 || got[0] != 1 || got[59] != 119 {
		t.Errorf("blocked PRs %v; want the odd ones", got)
	}
	rep, err = env.Store.Check(ctx)
	if err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
		t.Errorf("check after the resumption: %+v %v", rep, err)
	}
}

// TestPolicyRejudgeAfterProcessDeath: the process that changed the policy
// died before it ran any of the work, holding its lease. The scheduled
// function leaves the work alone while the lease lasts, then completes it.
func TestPolicyRejudgeAfterProcessDeath(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	severePRs(t, env, 4)
	ctx := context.Background()
	run := env.Store.Runner(time.Now, nil)
	at := time.Now()
	if _, _, err := env.Store.SetGatePolicy(ctx, highOnly, testWho, at, run.LeaseFrom(at)); err != nil {
		t.Fatal(err)
	}
	// Every gate names the old policy (pending), and PRs 2 and 4 are judged otherwise.
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Running) != 1 || len(rep.Pending) != 6 || len(rep.Drift) != 0 {
		t.Fatalf("check with the work not run: %+v %v", rep, err)
	}
	if n, err := run.Resume(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("resume under a live lease: %d %v", n, err)
	}
	later := time.Now().Add(work.DefaultLease + time.Second)
	if n, err := env.Store.Runner(func() time.Time { return later }, nil).Resume(ctx, later); err != nil || n != 1 {
		t.Fatalf("resume once the lease ran out: %d %v", n, err)
	}
	if got := blockedPRs(t, env, 4); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("blocked PRs %v", got)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}

// TestCheckFindsWrongGates: check reports a stored gate, a listing's
// blocked flag or a newest scan's block status that the policy does not
// decide.
func TestCheckFindsWrongGates(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	severePRs(t, env, 2)
	ctx := context.Background()
	set := func(pk, sk, attr string, v bool) {
		t.Helper()
		_, err := env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &env.Table,
			Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
			UpdateExpression:          aws.String("SET #a = :v"),
			ExpressionAttributeNames:  map[string]string{"#a": attr},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberBOOL{Value: v}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	set("PR#1#1#1", "PR", "blocked", false)
	set("SCAN#2", "SCAN", "block_status", false)
	rep, err := env.Store.Check(ctx)
	if err != nil || len(rep.Drift) != 3 || !strings.Contains(rep.Drift[0], "(listed blocked false)") ||
		!strings.Contains(rep.Drift[1], "the scan says [0 0 1 0 0] completed (0, false)") || !strings.HasPrefix(rep.Drift[2], "scan 2 ") {
		t.Fatalf("check: %q %v; want the listing's flag of PR 1, and scan 2's block status as its PR knows it and as the policy decides", rep.Drift, err)
	}
}
