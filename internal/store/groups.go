package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// A group is the partition of every allowlist rule of one type and one
// finding key (a name as matched: exact for secrets, upper-cased for
// vulnerabilities):
//
//	GROUP#<type>#<key> / GROUP                 version item: gv, n (rules)
//	GROUP#<type>#<key> / RULE#<allowlist id>   one item per rule
//	GROUP#<type>#<key> / RECENT#<ms>#<scan>#<c> a recent recording (findings.go)
//
// Every change of a rule increments gv in the same transaction, so a
// strongly consistent read of the version item tells whether rules read
// earlier are still current, and a write conditioned on gv applies a
// judgement only while it is. One rule per item keeps every item small
// whatever the number of allowlists sharing a name.

// maxCovering bounds the allowlist ids stored on a finding per group (the
// lowest ids of those covering it), so no finding item can grow with the
// number of allowlists of one name.
const maxCovering = 100

// groupKey names a group.
type groupKey struct {
	typ scangate.ScanType
	key string // scangate.FindingKey of the name
}

func groupOf(t scangate.ScanType, name string) groupKey {
	return groupKey{typ: t, key: scangate.FindingKey(t, name)}
}

func (g groupKey) pk() string { return KeyGroup + string(g.typ) + "#" + g.key }

func (g groupKey) versionKey() item { return key(g.pk(), "GROUP") }

func ruleSK(id int64) string { return fmt.Sprintf("RULE#%019d", id) }

func (g groupKey) ruleKey(id int64) item { return key(g.pk(), ruleSK(id)) }

// findings is the GSI1 partition of the findings (and alias entries) that
// carry the group's key.
func (g groupKey) findings() string { return KeyFinding + string(g.typ) + "#" + g.key }

// parseGroupPK reads a group's key from its partition key.
func parseGroupPK(pk string) groupKey {
	parts := strings.SplitN(pk, "#", 3)
	if len(parts) < 3 {
		return groupKey{}
	}
	return groupKey{typ: scangate.ScanType(parts[1]), key: parts[2]}
}

// group is a snapshot of a group's rules at version gv.
type group struct {
	groupKey
	gv    int64
	rules map[int64]scangate.Rule
}

// covering returns the ids of the rules that cover f, lowest first, at
// most maxCovering.
func (g group) covering(f scangate.FindingRef) []int64 {
	var ids []int64
	for id, r := range g.rules {
		if r.Covers(f) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids[:min(len(ids), maxCovering)]
}

func ruleItem(g groupKey, id int64, r scangate.Rule) item {
	it := g.ruleKey(id)
	it[aID] = num(id)
	for k, v := range ruleAttrs(r) {
		it[k] = v
	}
	return it
}

// ruleAttrs are the attributes of a rule, on its rule item and on its
// allowlist item.
func ruleAttrs(r scangate.Rule) item {
	it := item{aType: str(string(r.Type)), aName: str(r.Name), aActive: boolean(r.Active), aGlobal: boolean(r.Global)}
	setIDs(it, aRepos, r.Repos)
	setIDs(it, aVcs, r.Vcs)
	setStrings(it, aPaths, r.Paths)
	setStrings(it, aFPrints, r.Fingerprints)
	if r.Expired {
		it[aExpired] = boolean(true)
	}
	return it
}

func ruleFrom(it item) scangate.Rule {
	return scangate.Rule{Type: scangate.ScanType(getS(it, aType)), Name: getS(it, aName), Active: getBool(it, aActive, false),
		Global: getBool(it, aGlobal, false), Repos: getIDs(it, aRepos), Vcs: getIDs(it, aVcs), Paths: getStrings(it, aPaths),
		Fingerprints: getStrings(it, aFPrints), Expired: getBool(it, aExpired, false)}
}

// Labels of group items in allowlist transactions.
const (
	lRule     = "rule"
	lOldRule  = "old rule"
	lGroup    = "group"
	lOldGroup = "old group"
)

// setRule writes a rule into its group and moves the group's version
// from cur, the version as read, conditioned on it.
func setRule(t *tx, g groupKey, cur groupVersion, id int64, r scangate.Rule, added bool) {
	t.put(lRule, ruleItem(g, id, r), nil)
	n := int64(0)
	if added {
		n = 1
	}
	moveGroup(t, lGroup, g, cur, n)
}

// dropRule takes a rule out of its group and moves the group's version
// from cur.
func dropRule(t *tx, g groupKey, cur groupVersion, id int64) {
	t.del(lOldRule, g.ruleKey(id), nil)
	moveGroup(t, lOldGroup, g, cur, -1)
}

// moveGroup moves a group's version from cur.gv (as read) to the next,
// and its count of rules by rules, conditioned on the version: the work a
// change writes then knows the version its change made (reevalParams).
func moveGroup(t *tx, label string, g groupKey, cur groupVersion, rules int64) {
	c := when(ref(aGroupVer)+" = :gv", ":gv", num(cur.gv))
	if cur.gv == 0 {
		c = when("attribute_not_exists(" + ref(aGroupVer) + ")")
	}
	t.put(label, merge(g.versionKey(), item{aGroupVer: num(cur.gv + 1), aN: num(cur.n + rules)}), c)
}

// snapshot reads a group's rules exactly as they are at one version: its
// version, its rules, its version again, until the two reads agree (every
// change of a rule moves the version in its transaction).
func (s *Store) snapshot(ctx context.Context, g groupKey) (group, error) {
	var out group
	err := s.retry.Do(ctx, "read "+g.pk(), func(int) (bool, error) {
		gs, err := s.readGroups(ctx, []groupKey{g})
		if err != nil {
			return true, err
		}
		v, err := s.groupVersions(ctx, []groupKey{g})
		if err != nil {
			return true, err
		}
		out = gs[g]
		return v[g].gv == out.gv, nil
	})
	return out, err
}

// readGroups reads groups' rules: their version items in batches
// (strongly consistent), then the rules of those that have any. A rule
// read after its version item may be newer than that version, so a
// judgement made by them is marked with a version as old as its rules or
// older, never newer: a recording reads the versions again after it
// commits (and settles its findings of a group that moved), and a
// re-evaluation reads a snapshot, whose version is exactly its rules'.
func (s *Store) readGroups(ctx context.Context, keys []groupKey) (map[groupKey]group, error) {
	versions, err := s.groupVersions(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := map[groupKey]group{}
	var withRules []groupKey
	for g, v := range versions {
		out[g] = group{groupKey: g, gv: v.gv, rules: map[int64]scangate.Rule{}}
		if v.n > 0 {
			withRules = append(withRules, g)
		}
	}
	rules := make([][]item, len(withRules))
	idx := make([]int, len(withRules))
	for i := range idx {
		idx[i] = i
	}
	err = parallel(ctx, batchParallel, idx, func(ctx context.Context, i int) error {
		items, err := s.queryAll(ctx, "read allowlist rules", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :rule)"),
			ExpressionAttributeValues: item{":pk": str(withRules[i].pk()), ":rule": str("RULE#")},
			ConsistentRead:            aws.Bool(true),
		})
		rules[i] = items
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, g := range withRules {
		for _, it := range rules[i] {
			out[g].rules[getN(it, aID)] = ruleFrom(it).Compiled()
		}
	}
	return out, nil
}

// groupVersion is what a group's version item holds.
type groupVersion struct{ gv, n int64 }

// groupVersions reads the version items of groups, strongly consistent.
func (s *Store) groupVersions(ctx context.Context, keys []groupKey) (map[groupKey]groupVersion, error) {
	out, _, err := s.readVersions(ctx, keys, nil)
	return out, err
}

// readVersions reads the version items of groups, and the items of more
// (the policy's global item), strongly consistent: the groups' versions
// and the policy version.
func (s *Store) readVersions(ctx context.Context, keys []groupKey, more []item) (map[groupKey]groupVersion, int64, error) {
	ks := more
	out := map[groupKey]groupVersion{}
	for _, g := range keys {
		if _, ok := out[g]; !ok {
			out[g] = groupVersion{}
			ks = append(ks, g.versionKey())
		}
	}
	items, err := s.batchGetAll(ctx, "read allowlist groups", ks)
	if err != nil {
		return nil, 0, err
	}
	var pv int64
	for _, it := range items {
		if getS(it, aPK) == policyPK {
			pv = getN(it, aPolicyVer)
			continue
		}
		out[parseGroupPK(getS(it, aPK))] = groupVersion{gv: getN(it, aGroupVer), n: getN(it, aN)}
	}
	return out, pv, nil
}
