package ops

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/boot"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/events/bus"
	"github.com/scangate/scangate/internal/keys"
	"github.com/scangate/scangate/internal/queue/deliverysqs"
	"github.com/scangate/scangate/internal/queue/worksqs"
	"github.com/scangate/scangate/internal/seal"
)

// The generated files: every function's main and template.yaml's
// function blocks follow from the table (Generate). `make generate` writes
// them; TestGeneratedFilesAreCurrent fails when a committed one differs.

// TableSource is the file of the table, from the repository's root: the
// mains are written from its builders' source.
const TableSource = "internal/ops/ops.go"

// Markers around the generated function blocks in template.yaml.
const (
	beginFunctions = "  # ---- Functions: generated from internal/ops (make generate); edit the operations table, not these lines ----\n"
	endFunctions   = "  # ---- End of the generated functions ----\n"
)

// use is what one use of a dependency in a builder means for the
// function: the line its main builds it with (if any), the expression that
// replaces it in the main, the environment it needs and what it may call.
type use struct {
	pattern string // in the builder's source: d.Cursors()
	build   string // in the main, before the handler: wq, err := worksqs.Open(os.Getenv)
	expr    string // in the main, in place of the pattern
	env     [][2]string
	grants  []Grant
}

// uses are the dependencies a builder may take, as its main gives them.
func uses() []use {
	return []use{
		{pattern: "d.Store()", expr: "f.Store"},
		{pattern: "d.Log()", expr: "f.Log"},
		{pattern: "d.Now", expr: "time.Now"},
		{pattern: "d.Config().TokenTTL", expr: "f.Config.TokenTTL", env: [][2]string{{"TOKEN_TTL_SECONDS", "!Ref TokenLifetime"}}},
		{pattern: "d.Config().PrivateIntegrations", expr: "f.Config.PrivateIntegrations",
			env: [][2]string{{"INTEGRATIONS_PRIVATE_NETWORK", "!Ref IntegrationsPrivateNetwork"}}},
		{pattern: "d.Config()", expr: "f.Config"},
		{pattern: "d.Egress()", expr: "f.Egress()", env: [][2]string{{"EGRESS_LOOPBACK_HTTP", "!Ref AllowLoopbackHttp"}}},
		{pattern: "d.Cursors()", expr: "api.NewLazyCursors(keys.CursorKey(f.Env))",
			env:    [][2]string{{"CURSOR_KEY_ID", "!Ref CursorKey"}},
			grants: []Grant{on("!Ref CursorKey", "secretsmanager:GetSecretValue")}},
		{pattern: "d.Box()", expr: "seal.Lazy(keys.SecretsKey(f.Env))",
			env:    [][2]string{{"SECRETS_KEY_ID", "!Ref SecretsKey"}},
			grants: []Grant{on("!Ref SecretsKey", "secretsmanager:GetSecretValue")}},
		{pattern: "d.SSOSecret()", expr: "keys.SSOClientSecret(os.Getenv)",
			env:    [][2]string{{"SSO_CLIENT_SECRET_ID", "!Ref SsoClientSecret"}},
			grants: []Grant{on("!Ref SsoClientSecret", "secretsmanager:GetSecretValue")}},
		{pattern: "d.WorkQueue()", build: "wq, err := worksqs.Open(os.Getenv)", expr: "wq",
			env:    [][2]string{{"WORK_QUEUE_URL", "!Ref WorkQueue"}},
			grants: []Grant{on("!GetAtt WorkQueue.Arn", "sqs:SendMessage").because("Large re-evaluations: their steps, one message each.")}},
		{pattern: "d.Queues()", build: "q, err := deliverysqs.Open(os.Getenv)", expr: "q",
			env: [][2]string{{"DELIVERY_QUEUE_URL", "!Ref DeliveryQueue"}, {"RETRY_QUEUE_URL", "!Ref DeliveryRetryQueue"}}},
		{pattern: "d.Bus()", build: "eb, err := bus.Open(os.Getenv)", expr: "eb", env: [][2]string{{"EVENT_BUS_NAME", "!Ref EventBus"}}},
		{pattern: "d.Bucket()", build: "b, err := bucket.Open(os.Getenv)", expr: "b", env: [][2]string{{"UPLOADS_BUCKET", uploadsBucket}}},
		{pattern: "d.S3()", build: "s3c, err := bucket.NewClient(os.Getenv)", expr: "s3c"},
	}
}

// builders reads the table's source: each operation's builder, as the
// source of the expression it returns.
func builders(src []byte) (map[string]string, map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, TableSource, src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", TableSource, err)
	}
	imports := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = path
	}
	f, err = parser.ParseFile(fset, TableSource, src, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", TableSource, err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		name := ""
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
				if b, ok := kv.Value.(*ast.BasicLit); ok {
					name, _ = strconv.Unquote(b.Value)
				}
			} else if fn, ok := kv.Value.(*ast.FuncLit); ok && name != "" && len(fn.Body.List) == 1 {
				if ret, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					e := ret.Results[0]
					out[name] = string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
				}
			}
		}
		return true
	})
	return out, imports, nil
}

// usesOf are the dependencies a builder's source takes, in the order of
// uses (a longer pattern first: d.Config().TokenTTL before d.Config()).
func usesOf(builder string) []use {
	var out []use
	rest := builder
	for _, u := range uses() {
		if strings.Contains(rest, u.pattern) {
			out = append(out, u)
			rest = strings.ReplaceAll(rest, u.pattern, "")
		}
	}
	return out
}

// pkgPath is the import path of the package that declares v's type.
func pkgPath(v any) string { return reflect.TypeOf(v).PkgPath() }

// Main is the source of functions/<op>/main.go.
func Main(op Operation, builder string, imports map[string]string) ([]byte, error) {
	expr := builder
	var builds []string
	usesStore := false
	for _, u := range usesOf(builder) {
		expr = strings.ReplaceAll(expr, u.pattern, u.expr)
		if u.build != "" {
			builds = append(builds, u.build, "f.Check(err)")
		}
		usesStore = usesStore || u.pattern == "d.Store()"
	}
	if m := regexp.MustCompile(`\bd\.[A-Za-z]+`).FindString(expr); m != "" {
		return nil, fmt.Errorf("%s: the main cannot give %s (add it to ops.uses)", op.Name, m)
	}
	if op.Kind() == "API" {
		expr = "f.API(" + expr + ")"
	}
	open := "boot.Open"
	if !usesStore {
		open = "boot.OpenWithoutStore"
	}
	body := fmt.Sprintf("func main() {\n\tf := %s(%q)\n%s\tlambda.Start(%s)\n}\n", open, op.Name, indent(builds, "\t"), expr)
	std, others, err := mainImports(op, body, imports)
	if err != nil {
		return nil, err
	}
	slices.Sort(std)
	slices.Sort(others)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by make generate from internal/ops; DO NOT EDIT.\n\n")
	// One import declaration a line: the mains differ in what they
	// import and build, not in the lines that list it (docs/DECISIONS.md).
	fmt.Fprintf(&b, "// Command %s is the Lambda %s.\npackage main\n\n", op.Name, op.summary())
	for _, path := range append(slices.Compact(std), slices.Compact(others)...) {
		fmt.Fprintf(&b, "import %s\n", path)
	}
	fmt.Fprintf(&b, "\n%s", body)
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: format the main: %w\n%s", op.Name, err, b.String())
	}
	return out, nil
}

// mainImports are the import paths, standard library and others, of
// the packages body (a main's source) uses: the generator's own and those
// of imports (TableSource's, by name).
func mainImports(op Operation, body string, imports map[string]string) (std, others []string, err error) {
	known := map[string]string{
		"api": pkgPath(api.Handler(nil)), "boot": pkgPath(boot.Env{}), "keys": pkgPath(keys.Key{}), "seal": pkgPath(seal.Box{}),
		"worksqs": pkgPath(worksqs.SQS{}), "deliverysqs": pkgPath(deliverysqs.SQS{}), "bus": pkgPath(bus.EventBridge{}), "bucket": pkgPath(bucket.Bucket{}),
		"lambda": "github.com/aws/aws-lambda-go/lambda", "time": "time", "os": "os",
	}
	for name, path := range imports {
		if _, ok := known[name]; !ok {
			known[name] = path
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", "package main\n"+body, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the main does not parse: %w\n%s", op.Name, err, body)
	}
	var missing error
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || x.Obj != nil {
			return true
		}
		path, ok := known[x.Name]
		switch {
		case !ok:
			missing = fmt.Errorf("%s: the main uses %s, which is no import of %s", op.Name, x.Name, TableSource)
		case !strings.Contains(path, "."):
			std = append(std, strconv.Quote(path))
		default:
			others = append(others, strconv.Quote(path))
		}
		return true
	})
	if missing != nil {
		return nil, nil, missing
	}
	return std, others, nil
}

func indent(lines []string, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

// summary says what the function serves: its route and description, or
// its description alone.
func (o Operation) summary() string {
	desc := strings.TrimSuffix(o.Description, ".")
	if len(desc) > 1 && unicode.IsUpper(rune(desc[0])) && unicode.IsLower(rune(desc[1])) {
		desc = strings.ToLower(desc[:1]) + desc[1:]
	}
	if o.Method != "" {
		return "of " + o.Method + " " + o.Path + ": " + desc
	}
	by := map[string]string{"Authorizer": "API Gateway (its TOKEN authorizer)", "S3": "S3 events", "Schedule": "a schedule",
		"Queue": "an SQS queue", "Stream": "the table's stream", "CustomResource": "CloudFormation (a custom resource)"}[o.Kind()]
	return "invoked by " + by + ": " + desc
}

// Policy is every statement of the function's IAM policy: the write-time
// check of an authenticated write, what its dependencies need, then its
// own grants.
func (o Operation) Policy(builder string) []Grant {
	var out []Grant
	if o.Kind() == "API" && o.Method != "GET" && !o.Public {
		out = append(out, onTable("BatchGetItem", writeCheckKeys()...))
	}
	for _, u := range usesOf(builder) {
		out = append(out, u.grants...)
	}
	return append(out, o.Grants...)
}

// Environment is the function's own environment variables: those its
// dependencies read, then its own, by name.
func (o Operation) Environment(builder string) [][2]string {
	var out [][2]string
	for _, u := range usesOf(builder) {
		out = append(out, u.env...)
	}
	own := make([]string, 0, len(o.Env))
	for k := range o.Env {
		own = append(own, k)
	}
	slices.Sort(own)
	for _, k := range own {
		out = append(out, [2]string{k, o.Env[k]})
	}
	return out
}

// apiSkips are the checkov checks an API function (and the authorizer)
// does not follow; docs/SECURITY.md says why at length.
func apiSkips() []Skip {
	return []Skip{
		{"CKV_AWS_116", "called synchronously by API Gateway; a DLQ takes only asynchronous failures"},
		{"CKV_AWS_115", "bounded by API Gateway's throttling; reserving would partition the pool"},
		{"CKV_AWS_117", "calls AWS over TLS with IAM only; a VPC adds cold start, not protection"},
		{"CKV_AWS_173", "no secret in its environment; Lambda's AWS managed key encrypts it"},
	}
}

// block is the function's resource in template.yaml.
func (o Operation) block(builder string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("  %s:", LogicalID(o.Name))
	p("    Type: AWS::Serverless::Function")
	skips := o.Checkov
	if skips == nil {
		skips = apiSkips()
	}
	var sk []string
	for _, s := range skips {
		sk = append(sk, fmt.Sprintf("{id: %s, comment: %s}", s.ID, quote(s.Comment)))
	}
	p("    Metadata: {BuildMethod: makefile, checkov: {skip: [%s]}}", strings.Join(sk, ", "))
	p("    Properties:")
	desc := o.Description
	if o.Method != "" {
		desc = o.Method + " " + o.Path + ", " + desc
	}
	p("      Description: %s", quote(desc))
	if o.MemorySize != 0 {
		p("      MemorySize: %d", o.MemorySize)
	}
	if env := o.Environment(builder); len(env) > 0 {
		var vs []string
		for _, kv := range env {
			vs = append(vs, kv[0]+": "+kv[1])
		}
		p("      Environment: {Variables: {%s}}", strings.Join(vs, ", "))
	}
	for _, l := range strings.Split(strings.TrimSpace(o.Properties), "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			p("      %s", l)
		}
	}
	if o.Method != "" {
		auth := ""
		if o.Public {
			auth = ", Auth: {Authorizer: NONE}"
		}
		p("      Events: {%s: {Type: Api, Properties: {RestApiId: !Ref Api, Path: %s, Method: %s%s}}}",
			strings.TrimSuffix(LogicalID(o.Name), "Function"), quote(o.Path), strings.ToLower(o.Method), auth)
	}
	if pol := o.Policy(builder); len(pol) > 0 {
		p("      Policies:")
		p("        - Statement:")
		for _, g := range pol {
			if g.Why != "" {
				p("            # %s", g.Why)
			}
			p("            - %s", g.yaml())
		}
	}
	return b.String()
}

// TemplateFunctions is the generated part of template.yaml: every
// function's resource, in the table's order.
func TemplateFunctions(src []byte) (string, error) {
	bs, _, err := builders(src)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(beginFunctions)
	b.WriteString("  # Shared by all (Globals): runtime, memory, timeout, the log group. Every authenticated\n" +
		"  # write (not GET) may first read the token it is called with and its user (the write-time\n" +
		"  # check, docs/SECURITY.md): its first statement. LeadingKeys are the store's key prefixes.\n")
	for _, op := range Operations() {
		builder, ok := bs[op.Name]
		if !ok {
			return "", fmt.Errorf("%s: no builder found in %s", op.Name, TableSource)
		}
		b.WriteString("\n" + op.block(builder))
	}
	b.WriteString("\n" + endFunctions)
	return b.String(), nil
}

// SpliceTemplate replaces the generated function blocks of template.yaml
// (between the markers) with functions.
func SpliceTemplate(template []byte, functions string) ([]byte, error) {
	t := string(template)
	i, j := strings.Index(t, beginFunctions), strings.Index(t, endFunctions)
	if i < 0 || j < i {
		return nil, fmt.Errorf("template.yaml has no generated functions between %q and %q", strings.TrimSpace(beginFunctions), strings.TrimSpace(endFunctions))
	}
	return []byte(t[:i] + functions + t[j+len(endFunctions):]), nil
}

// Generate is every generated file, by its path from the repository's
// root, from the files at root: the table's source and template.yaml.
func Generate(readFile func(string) ([]byte, error)) (map[string][]byte, error) {
	src, err := readFile(TableSource)
	if err != nil {
		return nil, err
	}
	bs, imports, err := builders(src)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, op := range Operations() {
		main, err := Main(op, bs[op.Name], imports)
		if err != nil {
			return nil, err
		}
		out["functions/"+op.Name+"/main.go"] = main
	}
	fns, err := TemplateFunctions(src)
	if err != nil {
		return nil, err
	}
	tpl, err := readFile("template.yaml")
	if err != nil {
		return nil, err
	}
	if out["template.yaml"], err = SpliceTemplate(tpl, fns); err != nil {
		return nil, err
	}
	return out, nil
}
