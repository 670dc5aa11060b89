package api_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/ddbtest"
)

// fault makes every attempt of the named operation (any, if empty) fail
// with the given answer, and counts the attempts of the operation. With
// outage, the failure starts at the operation's first attempt and then
// hits every attempt of every operation, as a database outage would.
func (h *harness) fault(op string, answer *ddbtest.Answer, outage bool) *atomic.Int64 {
	var n atomic.Int64
	var down atomic.Bool
	f := func(o string, _ any) error {
		if op == "" || o == op {
			n.Add(1)
			down.Store(outage)
			return answer
		}
		if down.Load() {
			return answer
		}
		return nil
	}
	h.env.Fault.Store(&f)
	return &n
}

func (h *harness) clearFaults() { h.env.Fault.Store(nil) }

func expect503(t *testing.T, resp events.APIGatewayProxyResponse) {
	t.Helper()
	expectProblem(t, resp, 503)
	if ra, err := strconv.Atoi(resp.Headers["Retry-After"]); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", resp.Headers["Retry-After"])
	}
}

// TestFaultsAnswer503AndWriteNothingHalf fails DynamoDB, by throttling or
// internal errors, at the start or in the middle of every operation: the
// SDK retries (4 attempts), then the answer is 503 with Retry-After, and
// reading back shows nothing half-written. A change whose work fails once
// the change is made answers 202 instead: the work is written with the
// change, and the scheduled function completes it.
func TestFaultsAnswer503AndWriteNothingHalf(t *testing.T) {
	t.Parallel()
	throttled, internal := ddbtest.Throttled(), ddbtest.InternalServerError()
	h := newHarness(t)
	matchingScans(h)
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","repos":[100]}`))
	h.call("create-user", jsonReq(&h.admin, createBody("yara", "user")))

	for _, c := range []struct {
		name, op string
		answer   *ddbtest.Answer
		call     func() events.APIGatewayProxyResponse
		after    func(t *testing.T)
		running  bool // the change is made, its work left to the scheduled function (202)
	}{
		{"get scan throttled", "GetItem", throttled, func() events.APIGatewayProxyResponse { return h.get(&h.admin, "1") }, nil, false},
		{"login throttled", "BatchGetItem", throttled, func() events.APIGatewayProxyResponse { return h.login("admin", adminPassword) }, nil, false},
		{"login's token write fails", "TransactWriteItems", internal, func() events.APIGatewayProxyResponse { return h.login("admin", adminPassword) }, nil, false},
		{"create user's transaction fails", "TransactWriteItems", internal,
			func() events.APIGatewayProxyResponse {
				return h.call("create-user", jsonReq(&h.admin, createBody("zack", "user")))
			},
			func(t *testing.T) { // the username was not taken by half
				if resp := h.call("create-user", jsonReq(&h.admin, createBody("zack", "user"))); resp.StatusCode != 201 {
					t.Errorf("create after the failure: %d %s", resp.StatusCode, resp.Body)
				}
			}, false},
		{"update user's transaction throttled", "TransactWriteItems", throttled,
			func() events.APIGatewayProxyResponse {
				return h.call("update-user", update(h, "2", `{"role":"admin","active":true,"user_email":"yara2@example.com"}`))
			},
			func(t *testing.T) {
				u, err := h.env.Store.User(context.Background(), 2)
				if err != nil || u.Role != "user" || u.Email != "yara@example.com" {
					t.Errorf("user after the failure: %+v %v", u, err)
				}
			}, false},
		{"record scan's commit fails", "TransactWriteItems", internal,
			func() events.APIGatewayProxyResponse { return h.record(scanReq{Findings: []string{"sha256:aa"}}) },
			func(t *testing.T) { expectProblem(t, h.get(&h.admin, "5"), 404) }, false},
		{"record scan's findings throttled", "BatchWriteItem", throttled,
			func() events.APIGatewayProxyResponse { return h.record(scanReq{Findings: []string{"sha256:aa"}}) },
			func(t *testing.T) { expectProblem(t, h.get(&h.admin, "6"), 404) }, false},
		{"create allowlist fails", "TransactWriteItems", internal,
			func() events.APIGatewayProxyResponse {
				return h.allow(`{"type":"SECRET","name":"sha256:bb","global_":true}`)
			},
			func(t *testing.T) { expectProblem(t, h.modify(2, `{}`), 404) }, false},
		{"modify allowlist's re-evaluation throttled", "Query", throttled,
			func() events.APIGatewayProxyResponse { return h.modify(1, `{"repos":[100, 200]}`) }, nil, true},
		{"everything fails", "", internal,
			func() events.APIGatewayProxyResponse { return h.get(&h.admin, "1") }, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Internal errors are an outage from the operation on;
			// throttling hits the one operation.
			attempts := h.fault(c.op, c.answer, c.answer == internal)
			resp := c.call()
			h.clearFaults()
			if c.running {
				expectRunning(t, resp)
			} else {
				expect503(t, resp)
			}
			if n := attempts.Load(); n == 0 || n%4 != 0 {
				t.Errorf("%d attempts of %s; the SDK makes 4 of each call", n, c.op)
			}
			if c.after != nil {
				c.after(t)
			}
			if r, err := h.env.Store.Check(context.Background()); err != nil || len(r.Drift) > 0 || len(r.Running) == 0 && c.running {
				t.Errorf("after the failure: drift %v, work running %v, %v", r.Drift, r.Running, err)
			}
		})
	}
	// The scheduled function completes the modify's work: nobody sends it
	// again.
	h.expireAt(time.Now())
	if s3, _, _ := h.counts(3); s3 != 0 {
		t.Errorf("scan 3 has %v secrets once the modify's work is done; want 0", s3)
	}
	h.noDrift()
}

// expectRunning checks the answer of a change whose re-evaluation runs on:
// 202, with the re-evaluation running and its Location.
func expectRunning(t *testing.T, resp events.APIGatewayProxyResponse) map[string]any {
	t.Helper()
	if resp.StatusCode != 202 {
		t.Fatalf("status %d, body %s; want 202", resp.StatusCode, resp.Body)
	}
	b := decode(t, resp)
	r, _ := b["reevaluation"].(map[string]any)
	if r == nil || r["status"] != "running" || resp.Headers["Location"] != fmt.Sprintf("/api/reevaluations/%v", r["id"]) {
		t.Fatalf("202 without its running re-evaluation: %s %v", resp.Body, resp.Headers)
	}
	return b
}

// TestTransactionConflictsAreRetried: transactions cancelled by a conflict
// with another transaction are run again; the caller sees no error.
func TestTransactionConflictsAreRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var left atomic.Int64
	left.Store(3)
	f := func(op string, input any) error {
		tx, ok := input.(*dynamodb.TransactWriteItemsInput)
		if op != "TransactWriteItems" || !ok || left.Add(-1) < 0 {
			return nil
		}
		codes := make([]string, len(tx.TransactItems))
		for i := range codes {
			codes[i] = "None"
		}
		codes[len(codes)-1] = "TransactionConflict"
		return ddbtest.Canceled(codes...)
	}
	for _, call := range []func() events.APIGatewayProxyResponse{
		func() events.APIGatewayProxyResponse {
			return h.call("create-user", jsonReq(&h.admin, createBody("abe", "user")))
		},
		func() events.APIGatewayProxyResponse {
			return h.record(scanReq{Status: "completed", Findings: []string{"sha256:aa"}})
		},
		func() events.APIGatewayProxyResponse {
			return h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true}`)
		},
		func() events.APIGatewayProxyResponse {
			return h.call("update-user", update(h, "2", `{"role":"readonly","active":true,"user_email":"abe@example.com"}`))
		},
	} {
		left.Store(3)
		h.env.Fault.Store(&f)
		mustOK(t, call())
		h.env.Fault.Store(nil)
	}
	if s, _, _ := h.counts(1); s != 0 {
		t.Errorf("scan 1 has %v secrets; the allowlist covers its finding", s)
	}
	h.noDrift()
}
