package ops

import (
	"fmt"
	"strings"
)

// Grant is one Allow statement of a function's IAM policy in
// template.yaml. A statement on the table or one of its indexes names the
// leading keys it is limited to; any other names its resource.
type Grant struct {
	// Actions are IAM actions ("dynamodb:GetItem", "sqs:SendMessage").
	Actions []string
	// Keys are the partition keys a DynamoDB statement is limited to
	// (dynamodb:LeadingKeys), the store's own constants (store.KeyScan):
	// a prefix ending in "#" matches any id after it.
	Keys []string
	// Index is the index a DynamoDB statement queries ("GSI1"); "" is the
	// table itself.
	Index string
	// Resource is the resource of a statement on anything but the table,
	// as a YAML flow value ("!GetAtt WorkQueue.Arn").
	Resource string
	// Why is written above the statement in template.yaml.
	Why string
}

// onTable grants DynamoDB actions (space-separated, without "dynamodb:")
// on the table's items whose partition key is one of keys.
func onTable(actions string, keys ...string) Grant {
	return Grant{Actions: dynamoActions(actions), Keys: keys}
}

// onIndex grants DynamoDB actions on an index's items whose partition key
// (of the index) is one of keys.
func onIndex(index, actions string, keys ...string) Grant {
	return Grant{Actions: dynamoActions(actions), Keys: keys, Index: index}
}

// on grants actions on another resource than the table.
func on(resource string, actions ...string) Grant {
	return Grant{Actions: actions, Resource: resource}
}

// because says why the grant is there, above its statement.
func (g Grant) because(why string) Grant {
	g.Why = why
	return g
}

func dynamoActions(actions string) []string {
	var out []string
	for _, a := range strings.Fields(actions) {
		out = append(out, "dynamodb:"+a)
	}
	return out
}

// LeadingKeys are the grant's dynamodb:LeadingKeys patterns: a prefix
// key gets "*".
func (g Grant) LeadingKeys() []string {
	var out []string
	for _, k := range g.Keys {
		if strings.HasSuffix(k, "#") {
			k += "*"
		}
		out = append(out, k)
	}
	return out
}

// yaml is the statement as one YAML flow mapping.
func (g Grant) yaml() string {
	res := g.Resource
	switch {
	case res != "":
	case g.Index != "":
		res = fmt.Sprintf(`!Sub "${Table.Arn}/index/%s"`, g.Index)
	default:
		res = "!GetAtt Table.Arn"
	}
	s := fmt.Sprintf("{Effect: Allow, Action: [%s], Resource: %s", strings.Join(g.Actions, ", "), res)
	if len(g.Keys) > 0 {
		s += fmt.Sprintf(`, Condition: {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [%s]}}`, quoteAll(g.LeadingKeys()))
	}
	return s + "}"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, ", ")
}

// quote is s as a YAML double-quoted scalar (JSON's escapes are YAML's).
func quote(s string) string { return fmt.Sprintf("%q", s) }
