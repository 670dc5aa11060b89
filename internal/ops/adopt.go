package ops

import (
	"bytes"
	"fmt"
	"go/format"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/store"
)

// Adopt moves what template.yaml says by hand of a function of the table
// (a resource written outside the generated blocks, as operations were
// added before the table generated them) into the table's source: its
// route, description, memory, environment, grants (their leading keys as
// the store's constants), other properties and checkov skips become the
// entry's fields, and the resource and its log group leave the template.
// make generate then writes the function's block from the entry. It
// returns the new table source and template and the logical ids adopted.
func Adopt(table []Operation, src, template []byte) ([]byte, []byte, []string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(template, &doc); err != nil {
		return nil, nil, nil, fmt.Errorf("read template.yaml: %w", err)
	}
	lines := strings.SplitAfter(string(template), "\n")
	begin, end := markerLines(lines)
	if begin < 0 {
		return nil, nil, nil, fmt.Errorf("template.yaml has no generated functions between %q and %q", strings.TrimSpace(beginFunctions), strings.TrimSpace(endFunctions))
	}
	resources := child(doc.Content[0], "Resources")
	if resources == nil {
		return nil, nil, nil, fmt.Errorf("template.yaml has no Resources")
	}
	bs, _, err := builders(src)
	if err != nil {
		return nil, nil, nil, err
	}
	byID := map[string]Operation{}
	for _, op := range table {
		byID[LogicalID(op.Name)] = op
	}
	drop := map[int]bool{} // resource indexes (in resources.Content, of the key) to remove
	var adopted []string
	out := string(src)
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		line := resources.Content[i].Line
		if scalar(child(res, "Type")) != "AWS::Serverless::Function" || (line > begin && line < end) {
			continue
		}
		op, ok := byID[id]
		if !ok {
			return nil, nil, nil, fmt.Errorf("template.yaml's %s has no entry in the operations table: add its entry (name and builder) first", id)
		}
		fields, err := entryFields(op, bs[op.Name], res)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", id, err)
		}
		at := fmt.Sprintf("{Name: %q,", op.Name)
		if strings.Count(out, at) != 1 {
			return nil, nil, nil, fmt.Errorf("%s: the table's source has %d entries starting %s", id, strings.Count(out, at), at)
		}
		out = strings.Replace(out, at, at+"\n"+fields, 1)
		drop[i] = true
		for j := 0; j+1 < len(resources.Content); j += 2 {
			lg := resources.Content[j+1]
			if scalar(child(lg, "Type")) == "AWS::Logs::LogGroup" && strings.Contains(scalar(child(child(lg, "Properties"), "LogGroupName")), "${"+id+"}") {
				drop[j] = true
			}
		}
		adopted = append(adopted, id)
	}
	if len(adopted) == 0 {
		return src, template, nil, nil
	}
	formatted, err := format.Source([]byte(out))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("format the table's source: %w", err)
	}
	return formatted, []byte(strings.Join(withoutResources(lines, resources, drop), "")), adopted, nil
}

// markerLines are the (1-based) lines of the generated blocks' markers.
func markerLines(lines []string) (int, int) {
	begin, end := -1, -1
	for i, l := range lines {
		switch l {
		case beginFunctions:
			begin = i + 1
		case endFunctions:
			end = i + 1
		}
	}
	if end < begin {
		return -1, -1
	}
	return begin, end
}

// withoutResources drops the lines of the resources marked in drop: from
// a resource's key to the next resource's key, but the comment lines (and
// the blank line) that open the next one.
func withoutResources(lines []string, resources *yaml.Node, drop map[int]bool) []string {
	cut := map[int]bool{} // 0-based line indexes
	for i := 0; i+1 < len(resources.Content); i += 2 {
		if !drop[i] {
			continue
		}
		from := resources.Content[i].Line - 1
		to := len(lines)
		if i+2 < len(resources.Content) {
			to = resources.Content[i+2].Line - 1
		} else {
			for k := from + 1; k < len(lines); k++ {
				if l := lines[k]; l != "" && l[0] != ' ' && l[0] != '\n' && l[0] != '#' {
					to = k
					break
				}
			}
		}
		for to > from && strings.HasPrefix(strings.TrimSpace(lines[to-1]), "#") {
			to--
		}
		for k := from; k < to; k++ {
			cut[k] = true
		}
	}
	var out []string
	for k, l := range lines {
		if !cut[k] {
			out = append(out, l)
		}
	}
	return out
}

// entryFields are the Go fields of an operation's entry that say what
// its resource in template.yaml says.
func entryFields(op Operation, builder string, res *yaml.Node) (string, error) {
	if op.Method != "" || op.Grants != nil || op.Properties != "" {
		return "", fmt.Errorf("written in template.yaml by hand and in the table: keep one (the table)")
	}
	props := child(res, "Properties")
	var b strings.Builder
	field := func(format string, args ...any) { fmt.Fprintf(&b, format+",\n", args...) }
	rest := &yaml.Node{Kind: yaml.MappingNode}
	method, public := "", false
	for i := 0; i+1 < len(props.Content); i += 2 {
		k, v := props.Content[i], props.Content[i+1]
		switch k.Value {
		case "CodeUri", "Description", "Policies":
		case "MemorySize":
			field("MemorySize: %s", v.Value)
		case "Environment":
			env, err := ownEnv(op, builder, child(v, "Variables"))
			if err != nil {
				return "", err
			}
			if env != "" {
				field("Env: map[string]string{%s}", env)
			}
		case "Events":
			var others *yaml.Node
			method, public, others = apiEvents(v, field)
			if len(others.Content) > 0 {
				rest.Content = append(rest.Content, k, others)
			}
		default:
			rest.Content = append(rest.Content, k, v)
		}
	}
	op.Method, op.Public = method, public
	desc := scalar(child(props, "Description"))
	if method != "" {
		_, after, ok := strings.Cut(desc, ", ")
		if strings.HasPrefix(desc, method+" ") && ok {
			desc = after
		}
	}
	field("Description: %q", desc)
	grants, err := ownGrants(op, builder, child(props, "Policies"))
	if err != nil {
		return "", err
	}
	field("Grants: []Grant{\n%s}", grants)
	if len(rest.Content) > 0 {
		if err := propertiesField(rest, field); err != nil {
			return "", err
		}
	}
	if skips := checkovSkips(res); skips != nil && (op.Kind() != "API" && op.Kind() != "Authorizer" || !sameIDs(skips, apiSkips())) {
		var s strings.Builder
		for _, sk := range skips {
			fmt.Fprintf(&s, "{%q, %q},\n", sk.ID, sk.Comment)
		}
		field("Checkov: []Skip{\n%s}", s.String())
	}
	return b.String(), nil
}

// apiEvents writes with field the Method, Path and Public of the Api
// events of a resource's Events, v, and returns the method, whether the
// route is public and the other events (kept in the entry's Properties).
func apiEvents(v *yaml.Node, field func(format string, args ...any)) (method string, public bool, others *yaml.Node) {
	others = &yaml.Node{Kind: yaml.MappingNode}
	for j := 0; j+1 < len(v.Content); j += 2 {
		ev := v.Content[j+1]
		if scalar(child(ev, "Type")) != "Api" {
			others.Content = append(others.Content, v.Content[j], ev)
			continue
		}
		p := child(ev, "Properties")
		method = strings.ToUpper(scalar(child(p, "Method")))
		field("Method: %q, Path: %q", method, scalar(child(p, "Path")))
		if scalar(child(child(p, "Auth"), "Authorizer")) == "NONE" {
			public = true
			field("Public: true")
		}
	}
	return method, public, others
}

// propertiesField writes with field the Properties of an entry: rest, the
// resource's properties the table does not otherwise say, as YAML in a Go
// string.
func propertiesField(rest *yaml.Node, field func(format string, args ...any)) error {
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(rest); err != nil {
		return fmt.Errorf("write its properties: %w", err)
	}
	text := "\n" + y.String()
	if strings.Contains(text, "`") {
		field("Properties: %s", strconv.Quote(text))
	} else {
		field("Properties: `%s`", text)
	}
	return nil
}

// ownEnv is the Go map entries of the variables its dependencies do not
// already set.
func ownEnv(op Operation, builder string, vars *yaml.Node) (string, error) {
	derived := map[string]bool{}
	for _, kv := range op.Environment(builder) {
		derived[kv[0]] = true
	}
	var out []string
	for i := 0; vars != nil && i+1 < len(vars.Content); i += 2 {
		if name := vars.Content[i].Value; !derived[name] {
			v, err := flow(vars.Content[i+1])
			if err != nil {
				return "", err
			}
			out = append(out, fmt.Sprintf("%q: %q", name, v))
		}
	}
	return strings.Join(out, ", "), nil
}

// ownGrants is the Go of the statements the function's policy holds
// beyond what Operation.Policy adds (the write-time check, what its
// dependencies need).
func ownGrants(op Operation, builder string, policies *yaml.Node) (string, error) {
	added := map[string]int{}
	for _, g := range op.Policy(builder) {
		added[g.yaml()]++
	}
	keys := storeKeys()
	indexResource := regexp.MustCompile(`^\$\{Table\.Arn\}/index/([A-Za-z0-9]+)$`)
	var b strings.Builder
	for _, pol := range seq(policies) {
		for _, st := range seq(child(pol, "Statement")) {
			g := Grant{}
			for _, a := range seq(child(st, "Action")) {
				g.Actions = append(g.Actions, a.Value)
			}
			res := child(st, "Resource")
			switch m := indexResource.FindStringSubmatch(res.Value); {
			case res.Tag == "!GetAtt" && res.Value == "Table.Arn":
			case res.Tag == "!Sub" && m != nil:
				g.Index = m[1]
			default:
				text, err := flow(res)
				if err != nil {
					return "", err
				}
				g.Resource = text
			}
			var names []string
			for _, k := range seq(child(child(child(st, "Condition"), "ForAllValues:StringLike"), "dynamodb:LeadingKeys")) {
				key := strings.TrimSuffix(k.Value, "*")
				name, ok := keys[key]
				if !ok {
					return "", fmt.Errorf("no constant of the store's keys is %q: declare it in the store's keyspace and in ops.storeKeys", key)
				}
				g.Keys = append(g.Keys, key)
				names = append(names, name)
			}
			if added[g.yaml()] > 0 {
				added[g.yaml()]--
				continue
			}
			b.WriteString(grantSource(g, names, strings.TrimSpace(strings.TrimPrefix(st.HeadComment, "#"))))
		}
	}
	return b.String(), nil
}

// grantSource is a grant as the table writes it.
func grantSource(g Grant, keyNames []string, why string) string {
	var s string
	short := func() string {
		var a []string
		for _, act := range g.Actions {
			a = append(a, strings.TrimPrefix(act, "dynamodb:"))
		}
		return strconv.Quote(strings.Join(a, " "))
	}
	switch {
	case g.Resource != "":
		var acts []string
		for _, a := range g.Actions {
			acts = append(acts, strconv.Quote(a))
		}
		s = fmt.Sprintf("on(%s, %s)", strconv.Quote(g.Resource), strings.Join(acts, ", "))
	case g.Index != "":
		s = fmt.Sprintf("onIndex(%q, %s, %s)", g.Index, short(), strings.Join(keyNames, ", "))
	default:
		s = fmt.Sprintf("onTable(%s, %s)", short(), strings.Join(keyNames, ", "))
	}
	if why != "" {
		s += fmt.Sprintf(".because(%q)", strings.Join(strings.Fields(strings.ReplaceAll(why, "#", "")), " "))
	}
	return s + ",\n"
}

func checkovSkips(res *yaml.Node) []Skip {
	var out []Skip
	for _, s := range seq(child(child(child(res, "Metadata"), "checkov"), "skip")) {
		out = append(out, Skip{ID: scalar(child(s, "id")), Comment: scalar(child(s, "comment"))})
	}
	return out
}

func sameIDs(a, b []Skip) bool {
	ids := func(s []Skip) []string {
		var out []string
		for _, k := range s {
			out = append(out, k.ID)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ids(a), ids(b))
}

// flow is a YAML value written on one line.
func flow(n *yaml.Node) (string, error) {
	c := *n
	setFlow(&c)
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", n.Value, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func setFlow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style |= yaml.FlowStyle
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for i, c := range n.Content {
		cc := *c
		setFlow(&cc)
		n.Content[i] = &cc
	}
}

// child is the value of key in mapping n; nil when n is no mapping or has
// no such key.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// seq is a sequence's items; a scalar is a sequence of itself.
func seq(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode && n.Tag != "!Sub":
		return n.Content
	}
	return []*yaml.Node{n}
}

// storeKeys names each of the store's key constants by its value, as the
// table's source writes it.
func storeKeys() map[string]string {
	return map[string]string{
		store.KeyAllow: "store.KeyAllow", store.KeyAllowName: "store.KeyAllowName", store.KeyAllows: "store.KeyAllows",
		store.KeyAudit: "store.KeyAudit", store.KeyAuditLogin: "store.KeyAuditLogin", store.KeyAuditActor: "store.KeyAuditActor",
		store.KeyAuditTarget: "store.KeyAuditTarget", store.KeyBranch: "store.KeyBranch", store.KeyBranchID: "store.KeyBranchID",
		store.KeyCounter: "store.KeyCounter", store.KeyEmail: "store.KeyEmail", store.KeyEvent: "store.KeyEvent",
		store.KeyExpiry: "store.KeyExpiry", store.KeyFinding: "store.KeyFinding", store.KeyGroup: "store.KeyGroup",
		store.KeyIntegration: "store.KeyIntegration", store.KeyLoginFail: "store.KeyLoginFail", store.KeyOIDCTrust: "store.KeyOIDCTrust",
		store.KeyOnce: "store.KeyOnce", store.KeyPolicy: "store.KeyPolicy", store.KeyPR: "store.KeyPR", store.KeyPRID: "store.KeyPRID",
		store.KeyPRs: "store.KeyPRs", store.KeyRepoPRs: "store.KeyRepoPRs", store.KeyPRScans: "store.KeyPRScans",
		store.KeyScan: "store.KeyScan", store.KeySSO: "store.KeySSO", store.KeyStatus: "store.KeyStatus", store.KeyToken: "store.KeyToken",
		store.KeyTokenID: "store.KeyTokenID", store.KeyUpload: "store.KeyUpload", store.KeyUser: "store.KeyUser",
		store.KeyUsername: "store.KeyUsername", store.KeyUsers: "store.KeyUsers", store.KeyUserTokens: "store.KeyUserTokens",
		store.KeyWebhook: "store.KeyWebhook", store.KeyWebhooks: "store.KeyWebhooks", store.KeyWork: "store.KeyWork",
		store.KeyWorkQueue: "store.KeyWorkQueue",
	}
}
