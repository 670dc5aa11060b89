package ops_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/ops"
)

func TestLogicalID(t *testing.T) {
	for name, want := range map[string]string{
		"get-scan": "GetScanFunction", "authorizer": "AuthorizerFunction",
		"create-allowlist": "CreateAllowlistFunction", "record-scan-sarif": "RecordScanSarifFunction",
	} {
		if got := ops.LogicalID(name); got != want {
			t.Errorf("LogicalID(%q) = %q; want %q", name, got, want)
		}
	}
}

// repo is where the repository's files are, from this package.
const repo = "../../"

// TestOperationsAgree keeps the four places that name the functions in
// step: the directories of functions/, ops.Operations(), template.yaml's
// functions (their logical ids, routes and authorizer) and
// docs/openapi.yaml's routes. A function or route missing from, or extra
// in, any of them fails it.
func TestOperationsAgree(t *testing.T) {
	tpl, err := gateway.ReadTemplate(repo + "template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := functionDirs(repo + "functions")
	if err != nil {
		t.Fatal(err)
	}
	openapi, err := openAPIRoutes(repo + "docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkOperations(ops.Operations(), dirs, tpl, openapi) {
		t.Error(p)
	}
}

// TestMainsCallTheirConstructor: each functions/<op>/main.go opens the
// function under its name and starts the handler of the constructor its
// table entry calls (internal/ops/ops.go, read as Go source); it opens the
// store (boot.Open) exactly when that entry gives its constructor the
// store, else boot.OpenWithoutStore; an API function's handler is wrapped
// once by boot's API (the dashboard's CORS), no other; and none imports
// internal/ops, which would link every handler into every Lambda.
func TestMainsCallTheirConstructor(t *testing.T) {
	table, err := tableConstructors("ops.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops.Operations() {
		f := parseMain(t, op.Name)
		opener, opened, started, wraps := "", "", "", 0
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				switch sel := selector(call.Fun); sel {
				case "boot.Open", "boot.OpenWithoutStore":
					opener = sel
					if lit, ok := call.Args[0].(*ast.BasicLit); ok {
						opened = strings.Trim(lit.Value, `"`)
					}
				case "lambda.Start":
					arg := call.Args[0]
					for inner, ok := wrappedByAPI(arg); ok; inner, ok = wrappedByAPI(arg) {
						arg, wraps = inner, wraps+1
					}
					started = constructor(arg)
				}
			}
			return true
		})
		entry := table[op.Name]
		if opened != op.Name || started == "" || started != entry.constructor {
			t.Errorf("functions/%s/main.go opens %q and starts %q; the table's entry calls %q", op.Name, opened, started, entry.constructor)
		}
		if (opener == "boot.Open") != entry.store {
			t.Errorf("functions/%s/main.go calls %s; its table entry gives its constructor the store: %v", op.Name, opener, entry.store)
		}
		want := 0
		if op.Kind() == "API" {
			want = 1
		}
		if wraps != want {
			t.Errorf("functions/%s/main.go wraps its %s handler with boot's API %d times; want %d", op.Name, op.Kind(), wraps, want)
		}
		for _, imp := range f.Imports {
			if strings.HasSuffix(imp.Path.Value, `/internal/ops"`) {
				t.Errorf("functions/%s/main.go imports internal/ops", op.Name)
			}
		}
	}
}

// parseMain parses functions/<name>/main.go.
func parseMain(t *testing.T, name string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), repo+"functions/"+name+"/main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// entry is what the table's source says of one operation's builder.
type entry struct {
	constructor string // api.GetScan, trigger.NewIngest
	store       bool   // it passes d.Store()
}

// tableConstructors reads, from the source of the operations table, the
// constructor each entry's builder calls and whether it gives it the store.
func tableConstructors(path string) (map[string]entry, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]entry{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || selector(lit.Type) != "" {
			return true
		}
		name := ""
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Name" {
				name = strings.Trim(kv.Value.(*ast.BasicLit).Value, `"`)
			} else if fn, ok := kv.Value.(*ast.FuncLit); ok && name != "" {
				ret := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt)
				store := false
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					store = store || selector(n) == "d.Store"
					return !store
				})
				out[name] = entry{constructor: constructor(ret.Results[0]), store: store}
			}
		}
		return true
	})
	return out, nil
}

// wrappedByAPI is h for f.API(h), a main's wrapping of its API handler.
func wrappedByAPI(e ast.Expr) (ast.Expr, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, false
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "API" {
		if _, ok := sel.X.(*ast.Ident); ok {
			return call.Args[0], true
		}
	}
	return nil, false
}

// constructor is the package-qualified function whose call builds a
// handler: api.GetScan in api.GetScan(st, log).Handle.
func constructor(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "Handle" {
		e = sel.X
	}
	if call, ok := e.(*ast.CallExpr); ok {
		return selector(call.Fun)
	}
	return ""
}

// selector is pkg.Name for a qualified identifier, "" for anything else.
func selector(e ast.Node) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok {
			return x.Name + "." + sel.Sel.Name
		}
	}
	return ""
}

// TestOperationsAgreeDetectsMismatches runs the check on altered copies of
// the four places, so that it is known to fail for each kind of drift.
func TestOperationsAgreeDetectsMismatches(t *testing.T) {
	tpl, err := gateway.ReadTemplate(repo + "template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := functionDirs(repo + "functions")
	openapi, _ := openAPIRoutes(repo + "docs/openapi.yaml")
	table := ops.Operations()
	if p := checkOperations(table, dirs, tpl, openapi); len(p) != 0 {
		t.Fatalf("the repository itself disagrees: %v", p)
	}
	without := func(list []string, s string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == s })
	}
	withoutRoute := func(routes []gateway.Route, fn string) []gateway.Route {
		return slices.DeleteFunc(slices.Clone(routes), func(r gateway.Route) bool { return r.Function == fn })
	}
	cases := map[string]func() ([]ops.Operation, []string, gateway.Template, []string){
		"a directory without an operation": func() ([]ops.Operation, []string, gateway.Template, []string) {
			return table, append(slices.Clone(dirs), "delete-scan"), *tpl, openapi
		},
		"an operation without a directory": func() ([]ops.Operation, []string, gateway.Template, []string) {
			return table, without(dirs, "get-scan"), *tpl, openapi
		},
		"an operation missing from the table": func() ([]ops.Operation, []string, gateway.Template, []string) {
			return table[1:], dirs, *tpl, openapi
		},
		"a template function without an operation": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Functions = append(slices.Clone(tpl.Functions), "DeleteScanFunction")
			return table, dirs, t2, openapi
		},
		"an operation missing from the template": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Functions = without(tpl.Functions, "GetScanFunction")
			t2.Routes = withoutRoute(tpl.Routes, "GetScanFunction")
			return table, dirs, t2, openapi
		},
		"an API operation without a route": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Routes = withoutRoute(tpl.Routes, "GetScanFunction")
			return table, dirs, t2, without(openapi, "GET /api/pr/scan/{pr_scan_id}")
		},
		"a route missing from openapi.yaml": func() ([]ops.Operation, []string, gateway.Template, []string) {
			return table, dirs, *tpl, without(openapi, "GET /api/pr/scan/{pr_scan_id}")
		},
		"a route only in openapi.yaml": func() ([]ops.Operation, []string, gateway.Template, []string) {
			return table, dirs, *tpl, append(slices.Clone(openapi), "DELETE /api/pr/scan/{pr_scan_id}")
		},
		"the authorizer as an API operation": func() ([]ops.Operation, []string, gateway.Template, []string) {
			ops2 := slices.Clone(table)
			for i := range ops2 {
				if ops2[i].Authorizer != nil {
					ops2[i] = ops.Operation{Name: ops2[i].Name, API: ops2[i+1].API}
				}
			}
			return ops2, dirs, *tpl, openapi
		},
		"an S3 operation without its S3 event": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.S3Events = nil
			return table, dirs, t2, openapi
		},
		"an S3 event of an API operation": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.S3Events = append(slices.Clone(tpl.S3Events), gateway.S3Event{Function: "GetScanFunction", Prefix: "uploads/"})
			return table, dirs, t2, openapi
		},
		"a custom resource operation without its resource": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.CustomResources = nil
			return table, dirs, t2, openapi
		},
		"a custom resource invoking an API operation": func() ([]ops.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.CustomResources = maps.Clone(tpl.CustomResources)
			t2.CustomResources["GetScanFunction"] = "Dashboard"
			return table, dirs, t2, openapi
		},
		"an operation of no kind": func() ([]ops.Operation, []string, gateway.Template, []string) {
			ops2 := slices.Clone(table)
			ops2[1] = ops.Operation{Name: ops2[1].Name}
			return ops2, dirs, *tpl, openapi
		},
	}
	for name, alter := range cases {
		table, dirs, tpl, openapi := alter()
		if p := checkOperations(table, dirs, &tpl, openapi); len(p) == 0 {
			t.Errorf("%s: the check found nothing", name)
		} else {
			t.Logf("%s: %v", name, p)
		}
	}
}

// checkOperations returns every disagreement between the operations table,
// the function directories, the template and the OpenAPI routes.
func checkOperations(table []ops.Operation, dirs []string, tpl *gateway.Template, openapi []string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var names, ids []string
	for _, op := range table {
		names = append(names, op.Name)
		id := ops.LogicalID(op.Name)
		ids = append(ids, id)
		kinds := tpl.Triggers(id)
		switch {
		case op.Kind() == "":
			bad("operation %s must have exactly one handler kind", op.Name)
		case len(kinds) != 1 || kinds[0] != op.Kind():
			bad("operation %s is of kind %s; template.yaml invokes %s by %v", op.Name, op.Kind(), id, kinds)
		}
	}
	if i := slices.IndexFunc(table, func(op ops.Operation) bool { return ops.LogicalID(op.Name) == tpl.Authorizer.Function }); i < 0 || table[i].Authorizer == nil {
		bad("template.yaml's authorizer %s is not an authorizer operation", tpl.Authorizer.Function)
	}
	bad2 := func(what string, a, b []string, aName, bName string) {
		for _, v := range a {
			if !slices.Contains(b, v) {
				bad("%s %s is in %s but not in %s", what, v, aName, bName)
			}
		}
		for _, v := range b {
			if !slices.Contains(a, v) {
				bad("%s %s is in %s but not in %s", what, v, bName, aName)
			}
		}
	}
	bad2("function", names, dirs, "ops.Operations()", "functions/")
	bad2("function", ids, tpl.Functions, "ops.Operations()", "template.yaml")
	var fromTemplate []string
	for _, r := range tpl.Routes {
		fromTemplate = append(fromTemplate, r.Method+" "+r.Path)
	}
	bad2("route", fromTemplate, openapi, "template.yaml", "docs/openapi.yaml")
	return problems
}

// functionDirs lists the directories of functions/ that hold a main.go.
func functionDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(dir + "/" + e.Name() + "/main.go"); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// openAPIRoutes lists the routes of an OpenAPI document as "METHOD /path".
func openAPIRoutes(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var routes []string
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" || strings.HasPrefix(m, "x-") {
				continue
			}
			routes = append(routes, strings.ToUpper(m)+" "+p)
		}
	}
	return routes, nil
}
