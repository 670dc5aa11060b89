package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/scangate"
)

// Codes DynamoDB gives an item of a cancelled transaction.
const (
	codeConditionFailed = "ConditionalCheckFailed"
	codeConflict        = "TransactionConflict"
)

// ref is an attribute name as an expression placeholder (#name). Every
// attribute an expression names goes through one, since several of
// scangate's attribute names are reserved words in DynamoDB expressions
// (name, type, status, ttl, by).
func ref(a string) string { return "#" + a }

// namesOf maps the placeholders of expressions to the attribute names
// they stand for; nil when there are none.
func namesOf(exprs ...*string) map[string]string {
	var names map[string]string
	for _, e := range exprs {
		if e == nil {
			continue
		}
		s := *e
		for i := 0; i < len(s); i++ {
			if s[i] != '#' {
				continue
			}
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			if names == nil {
				names = map[string]string{}
			}
			names[s[i:j]] = s[i+1 : j]
			i = j - 1
		}
	}
	return names
}

// tx is one TransactWriteItems request whose items carry labels, so that a
// cancellation is read by what failed ("username", "group") rather than by
// position: adding an item never shifts the meaning of another.
type tx struct {
	table  string
	items  []types.TransactWriteItem
	labels []string
	// gates are the gates the transaction writes (putPR), scans and
	// findings what it records: the metrics its commit emits.
	gates                        []scangate.Gate
	causes                       []string
	scans, findings, newFindings int
}

func (s *Store) newTx() *tx { return &tx{table: s.table} }

// cond is a condition expression with its values, nil for none.
type cond struct {
	expr   string
	values item
}

// when builds a condition; vals alternate placeholder and value.
func when(expr string, vals ...any) *cond {
	c := &cond{expr: expr}
	for i := 0; i+1 < len(vals); i += 2 {
		if c.values == nil {
			c.values = item{}
		}
		c.values[vals[i].(string)] = vals[i+1].(types.AttributeValue)
	}
	return c
}

func (c *cond) parts() (*string, item) {
	if c == nil {
		return nil, nil
	}
	return aws.String(c.expr), c.values
}

func merge(a, b item) item {
	if len(b) == 0 {
		return a
	}
	out := item{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// put adds a Put of it, under c when not nil.
func (t *tx) put(label string, it item, c *cond) {
	expr, vals := c.parts()
	t.add(label, types.TransactWriteItem{Put: &types.Put{TableName: &t.table, Item: it,
		ConditionExpression: expr, ExpressionAttributeValues: vals, ExpressionAttributeNames: namesOf(expr)}})
}

// update adds an Update of the item at k.
func (t *tx) update(label string, k item, set string, vals item, c *cond) {
	expr, cv := c.parts()
	t.add(label, types.TransactWriteItem{Update: &types.Update{TableName: &t.table, Key: k,
		UpdateExpression: aws.String(set), ConditionExpression: expr, ExpressionAttributeValues: merge(vals, cv),
		ExpressionAttributeNames: namesOf(&set, expr)}})
}

// del adds a Delete of the item at k.
func (t *tx) del(label string, k item, c *cond) {
	expr, vals := c.parts()
	t.add(label, types.TransactWriteItem{Delete: &types.Delete{TableName: &t.table, Key: k,
		ConditionExpression: expr, ExpressionAttributeValues: vals, ExpressionAttributeNames: namesOf(expr)}})
}

// check adds a ConditionCheck of the item at k.
func (t *tx) check(label string, k item, c *cond) {
	expr, vals := c.parts()
	t.add(label, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &t.table, Key: k,
		ConditionExpression: expr, ExpressionAttributeValues: vals, ExpressionAttributeNames: namesOf(expr)}})
}

func (t *tx) add(label string, it types.TransactWriteItem) {
	t.items = append(t.items, it)
	t.labels = append(t.labels, label)
}

func (t *tx) len() int { return len(t.items) }

// cancelled is a transaction DynamoDB refused: the labels whose condition
// failed, and whether it lost a race with another transaction (then it may
// simply run again).
type cancelled struct {
	op       string
	failed   []string
	conflict bool
	err      error
}

func (c *cancelled) Error() string {
	return fmt.Sprintf("%s: transaction cancelled (conditions failed: %s; conflict: %v): %v",
		c.op, strings.Join(c.failed, ", "), c.conflict, c.err)
}

func (c *cancelled) Unwrap() error { return c.err }

// commit runs the transaction. It returns nil, a *cancelled naming what
// failed, or the classified error of the call.
func (s *Store) commit(ctx context.Context, op string, t *tx) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: t.items})
	if err == nil {
		s.measure(ctx, t)
		return nil
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return dbErr(op, err)
	}
	c := &cancelled{op: op, err: err}
	for i, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case codeConditionFailed:
			if i < len(t.labels) {
				c.failed = append(c.failed, t.labels[i])
			}
		case codeConflict:
			c.conflict = true
		}
	}
	if len(c.failed) == 0 && !c.conflict {
		// Throttled or failed for another reason after the SDK's retries.
		return dbErr(op, err)
	}
	return c
}

// failed reports whether err is a cancellation in which the condition of
// an item with the label failed.
func failed(err error, label string) bool {
	var c *cancelled
	return errors.As(err, &c) && slices.Contains(c.failed, label)
}

// lostRace reports whether err is a cancellation that another transaction
// caused, so the work may run again: a conflict, or a failed condition of
// one of the labels (an optimistic version that moved).
func lostRace(err error, labels ...string) bool {
	var c *cancelled
	if !errors.As(err, &c) {
		return false
	}
	if c.conflict {
		return true
	}
	for _, l := range labels {
		if slices.Contains(c.failed, l) {
			return true
		}
	}
	return false
}

// isCancelled reports whether err is any cancellation.
func isCancelled(err error) bool {
	var c *cancelled
	return errors.As(err, &c)
}

// measure emits the metrics of a committed transaction: each gate it
// wrote, by cause and decision, and the scans and findings it recorded.
func (s *Store) measure(ctx context.Context, t *tx) {
	for i, g := range t.gates {
		s.metrics.Emit(ctx, []metrics.Dim{{Name: metrics.DimCause, Value: t.causes[i]}, {Name: metrics.DimBlocked, Value: strconv.FormatBool(g.Blocked)}},
			metrics.CountOf(metrics.GateDecisions, 1))
	}
	if t.scans > 0 {
		s.metrics.Emit(ctx, nil, metrics.CountOf(metrics.ScansRecorded, t.scans), metrics.CountOf(metrics.FindingsRecorded, t.findings),
			metrics.CountOf(metrics.NewFindings, t.newFindings))
	}
}
