package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

// A group holds the rules of every allowlist of one type and name key, and
// a version (gv) that every change of them increases. Suppression of a
// finding depends only on its group, so a consistent read of one item tells
// how all findings of that name are to be judged, and a write conditioned
// on gv applies a judgement only while it is current.
type group struct {
	typ   scangate.ScanType
	key   string // scangate.FindingKey of the name
	gv    int64
	rules map[int64]scangate.Rule
}

func groupOf(t scangate.ScanType, name string) group {
	return group{typ: t, key: scangate.FindingKey(t, name), rules: map[int64]scangate.Rule{}}
}

func (g group) pk() string { return "GROUP#" + string(g.typ) + "#" + g.key }

func (g group) itemKey() item { return key(g.pk(), "GROUP") }

// findings is the GSI1 partition of the group's findings.
func (g group) findings() string { return "FINDING#" + string(g.typ) + "#" + g.key }

func (g group) covers(f scangate.FindingRef) bool {
	for _, r := range g.rules {
		if r.Covers(f) {
			return true
		}
	}
	return false
}

// setIDs stores a list of ids; an empty list is left out (and reads back
// as empty), which the embedded server also needs.
func setIDs(it item, name string, l []int64) {
	if len(l) == 0 {
		return
	}
	v := make([]types.AttributeValue, len(l))
	for i, n := range l {
		v[i] = num(n)
	}
	it[name] = &types.AttributeValueMemberL{Value: v}
}

func getIDs(it item, name string) []int64 {
	out := []int64{}
	if l, ok := it[name].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			out = append(out, getN(item{"n": v}, "n"))
		}
	}
	return out
}

func ruleItem(r scangate.Rule) item {
	it := item{"type": str(string(r.Type)), "name": str(r.Name), "active": boolean(r.Active), "global": boolean(r.Global)}
	setIDs(it, "repos", r.Repos)
	setIDs(it, "vcs", r.Vcs)
	return it
}

func ruleFrom(it item) scangate.Rule {
	return scangate.Rule{Type: scangate.ScanType(getS(it, "type")), Name: getS(it, "name"), Active: getBool(it, "active", false),
		Global: getBool(it, "global", false), Repos: getIDs(it, "repos"), Vcs: getIDs(it, "vcs")}
}

func (g group) item() item {
	rules := item{}
	for id, r := range g.rules {
		rules[strconv.FormatInt(id, 10)] = &types.AttributeValueMemberM{Value: ruleItem(r)}
	}
	it := g.itemKey()
	it["gv"] = num(g.gv)
	if len(rules) > 0 { // an empty map is left out, as the embedded server needs
		it["rules"] = &types.AttributeValueMemberM{Value: rules}
	}
	return it
}

func groupFrom(g group, it item) group {
	g.gv = getN(it, "gv")
	if m, ok := it["rules"].(*types.AttributeValueMemberM); ok {
		for id, v := range m.Value {
			if r, ok := v.(*types.AttributeValueMemberM); ok {
				n, _ := strconv.ParseInt(id, 10, 64)
				g.rules[n] = ruleFrom(r.Value)
			}
		}
	}
	return g
}

// putGroup writes a group under its version: gv must still be old.
func (s *Store) putGroup(g group, old int64) types.TransactWriteItem {
	p := &types.Put{TableName: &s.table, Item: g.item(), ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if old > 0 {
		p.ConditionExpression = aws.String("gv = :gv")
		p.ExpressionAttributeValues = item{":gv": num(old)}
	}
	return types.TransactWriteItem{Put: p}
}

// readGroups reads groups with consistent reads, 100 keys a batch; the
// same group may be asked for twice.
func (s *Store) readGroups(ctx context.Context, gs []group) ([]group, error) {
	var keys []item
	read := map[string]item{}
	for _, g := range gs {
		if _, ok := read[g.pk()]; !ok {
			read[g.pk()] = nil
			keys = append(keys, g.itemKey())
		}
	}
	items, err := s.batchGetAll(ctx, "get allowlist groups", keys)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		read[getS(it, "PK")] = it
	}
	out := make([]group, len(gs))
	for i, g := range gs {
		out[i] = groupOf(g.typ, g.key)
		if it := read[g.pk()]; it != nil {
			out[i] = groupFrom(out[i], it)
		}
	}
	return out, nil
}

func allowKey(id int64) item { return key("ALLOW#"+strconv.FormatInt(id, 10), "ALLOW") }

func allowItem(a scangate.Allowlist, ver int64) item {
	it := allowKey(a.ID)
	for k, v := range ruleItem(a.Rule) {
		it[k] = v
	}
	it["id"] = num(a.ID)
	setIDs(it, "comments", a.Comments)
	it["created_by"] = num(a.CreatedBy)
	it["updated_by"] = num(a.UpdatedBy)
	it["created_on"] = str(a.CreatedOn.String())
	it["updated_on"] = str(a.UpdatedOn.String())
	it["ver"] = num(ver)
	return it
}

func allowFrom(it item) (scangate.Allowlist, int64) {
	return scangate.Allowlist{
		ID: getN(it, "id"), Rule: ruleFrom(it), Comments: getIDs(it, "comments"),
		CreatedBy: getN(it, "created_by"), UpdatedBy: getN(it, "updated_by"),
		CreatedOn: getTime(it, "created_on"), UpdatedOn: getTime(it, "updated_on"),
	}, getN(it, "ver")
}

func (s *Store) commentPut(allowID, commentID, by int64, text string, at time.Time) types.TransactWriteItem {
	it := key("ALLOW#"+strconv.FormatInt(allowID, 10), fmt.Sprintf("COMMENT#%019d", commentID))
	it["id"] = num(commentID)
	it["text"] = str(text)
	it["by"] = num(by)
	it["at"] = str(scangate.At(at).String())
	return types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: it}}
}

// CreateAllowlist stores a new allowlist, adds its rule to its group and
// re-evaluates the group's findings before it returns.
func (s *Store) CreateAllowlist(ctx context.Context, r scangate.Rule, comment string, by int64, now time.Time) (scangate.Allowlist, scangate.Updated, error) {
	id, err := s.nextID(ctx, "allowlist")
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	at := scangate.At(now)
	a := scangate.Allowlist{ID: id, Rule: r, Comments: []int64{}, CreatedBy: by, UpdatedBy: by, CreatedOn: at, UpdatedOn: at}
	var commentID int64
	if comment != "" {
		if commentID, err = s.nextID(ctx, "comment"); err != nil {
			return scangate.Allowlist{}, scangate.Updated{}, err
		}
		a.Comments = append(a.Comments, commentID)
	}
	err = retry(ctx, "create allowlist", func() (bool, error) {
		gs, err := s.readGroups(ctx, []group{groupOf(r.Type, r.Name)})
		if err != nil {
			return true, err
		}
		g := gs[0]
		old := g.gv
		g.rules[id] = r
		g.gv++
		items := []types.TransactWriteItem{
			{Put: &types.Put{TableName: &s.table, Item: allowItem(a, 1), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			s.putGroup(g, old),
		}
		if commentID != 0 {
			items = append(items, s.commentPut(id, commentID, by, comment, now))
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		codes := cancelReasons(err)
		switch {
		case err == nil:
			return true, nil
		case conflicted(codes), len(codes) > 1 && codes[1] == "ConditionalCheckFailed":
			return false, nil
		}
		return true, dbErr("create allowlist", err)
	})
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	upd, err := s.settle(ctx, scangate.Rule{}, r)
	return a, upd, err
}

// UpdateAllowlist applies a partial change to an allowlist, moves its rule
// between groups when its type or name changes, appends the comment, and
// re-evaluates the findings of the old and the new group before it returns.
// Sent again after a failure, the same change completes the re-evaluation.
func (s *Store) UpdateAllowlist(ctx context.Context, id int64, c scangate.AllowlistChange, by int64, now time.Time) (scangate.Allowlist, scangate.Updated, error) {
	var a scangate.Allowlist
	var oldRule scangate.Rule
	var commentID int64
	err := retry(ctx, "update allowlist", func() (bool, error) {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: allowKey(id), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return true, dbErr("get allowlist", err)
		}
		if out.Item == nil {
			return true, scangate.Errorf(scangate.KindNotFound, "no allowlist has the id %d", id)
		}
		cur, ver := allowFrom(out.Item)
		oldRule, a = cur.Rule, cur
		a.Rule = c.Apply(cur.Rule)
		a.UpdatedBy, a.UpdatedOn = by, scangate.At(now)
		if c.Comment != "" && commentID == 0 {
			if commentID, err = s.nextID(ctx, "comment"); err != nil {
				return true, err
			}
		}
		if commentID != 0 {
			a.Comments = append(a.Comments, commentID)
		}
		items := []types.TransactWriteItem{{Put: &types.Put{TableName: &s.table, Item: allowItem(a, ver+1),
			ConditionExpression: aws.String("ver = :ver"), ExpressionAttributeValues: item{":ver": num(ver)}}}}
		if commentID != 0 {
			items = append(items, s.commentPut(id, commentID, by, c.Comment, now))
		}
		if !a.Rule.Equal(oldRule) {
			protos := []group{groupOf(oldRule.Type, oldRule.Name)}
			if ng := groupOf(a.Rule.Type, a.Rule.Name); ng.pk() != protos[0].pk() {
				protos = append(protos, ng)
			}
			gs, err := s.readGroups(ctx, protos)
			if err != nil {
				return true, err
			}
			if len(gs) == 1 {
				og := gs[0]
				og.rules[id] = a.Rule
				og.gv++
				items = append(items, s.putGroup(og, og.gv-1))
			} else {
				og, ng := gs[0], gs[1]
				delete(og.rules, id)
				og.gv++
				ng.rules[id] = a.Rule
				ng.gv++
				items = append(items, s.putGroup(og, og.gv-1), s.putGroup(ng, ng.gv-1))
			}
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		codes := cancelReasons(err)
		switch {
		case err == nil:
			return true, nil
		case conflicted(codes):
			return false, nil
		}
		for _, code := range codes {
			if code == "ConditionalCheckFailed" {
				return false, nil
			}
		}
		return true, dbErr("update allowlist", err)
	})
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	upd, err := s.settle(ctx, oldRule, a.Rule)
	return a, upd, err
}
