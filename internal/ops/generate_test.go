package ops_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/store"
)

func readRepo(path string) ([]byte, error) { return os.ReadFile(repo + path) }

// TestGeneratedFilesAreCurrent: every functions/<op>/main.go and
// template.yaml's function blocks are what make generate writes from the
// operations table; an edit by hand, or a table changed without make
// generate, fails it.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := ops.Generate(readRepo)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(ops.Operations())+1 {
		t.Fatalf("make generate writes %d files; want a main per operation and template.yaml", len(files))
	}
	for path, want := range files {
		got, err := readRepo(path)
		if err != nil {
			t.Errorf("%s: %v (run make generate)", path, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s is not what make generate writes from internal/ops (run make generate)", path)
		}
	}
}

// TestGenerateDetectsDrift: the comparison above fails for a main or a
// template edited by hand, and the template's generated part is found
// only between its markers.
func TestGenerateDetectsDrift(t *testing.T) {
	edited := func(path, old, new string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			b, err := readRepo(p)
			if p == path {
				b = []byte(strings.Replace(string(b), old, new, 1))
			}
			return b, err
		}
	}
	files, err := ops.Generate(readRepo)
	if err != nil {
		t.Fatal(err)
	}
	// The template's text outside the markers is kept as it is.
	files2, err := ops.Generate(edited("template.yaml", "MemorySize: 256\n", "MemorySize: 512\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files2["template.yaml"]), "MemorySize: 512\n") {
		t.Error("Generate rewrote the Globals, outside its markers")
	}
	// Inside them, an edit by hand is replaced by the table's block.
	route := `Path: "/api/pr/scan/{pr_scan_id}", Method: get`
	if !strings.Contains(string(files["template.yaml"]), route) {
		t.Fatal("the generated template has no GetScanFunction route")
	}
	files3, err := ops.Generate(edited("template.yaml", route, `Path: "/api/pr/scan/{id}", Method: get`))
	if err != nil {
		t.Fatal(err)
	}
	if string(files3["template.yaml"]) != string(files["template.yaml"]) {
		t.Error("a route edited by hand in the generated blocks was kept")
	}
	if _, err := ops.Generate(edited("template.yaml", "# ---- End of the generated functions ----", "# end")); err == nil {
		t.Error("a template without its end marker was spliced")
	}
}

// TestMainOfEachKind: a main opens the store exactly when its builder
// uses it, builds each client its builder takes from the environment,
// and wraps an API handler for the dashboard; a dependency the main
// cannot give is an error, not a main that does not compile.
func TestMainOfEachKind(t *testing.T) {
	imports := map[string]string{"api": "github.com/scangate/scangate/internal/api", "trigger": "github.com/scangate/scangate/internal/trigger"}
	get := ops.Operation{Name: "get-thing", Method: "GET", Path: "/api/things/{id}", Description: "a thing."}
	get.API = ofKind(t, "API").API
	src, err := ops.Main(get, "api.GetThing(d.Store(), d.Cursors(), d.Log()).Handle", imports)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`f := boot.Open("get-thing")`, "lambda.Start(f.API(api.GetThing(f.Store, api.NewLazyCursors(keys.CursorKey(f.Env)), f.Log).Handle))",
		"// Command get-thing is the Lambda of GET /api/things/{id}: a thing.", "DO NOT EDIT"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the main lacks %q:\n%s", want, src)
		}
	}
	sched := ops.Operation{Name: "tick", Description: "Ticks."}
	sched.Schedule = ofKind(t, "Schedule").Schedule
	src, err = ops.Main(sched, "trigger.Tick(d.WorkQueue(), d.Log())", imports)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`f := boot.OpenWithoutStore("tick")`, "wq, err := worksqs.Open(os.Getenv)", "lambda.Start(trigger.Tick(wq, f.Log))"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the main lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(string(src), "f.API(") {
		t.Errorf("a scheduled function's handler is wrapped for the dashboard:\n%s", src)
	}
	if _, err := ops.Main(get, "api.GetThing(d.Mailer(), d.Log()).Handle", imports); err == nil || !strings.Contains(err.Error(), "d.Mailer") {
		t.Errorf("a builder taking d.Mailer(): err = %v", err)
	}
	if _, err := ops.Main(get, "other.GetThing(d.Log()).Handle", imports); err == nil {
		t.Error("a builder calling a package ops.go does not import gave a main")
	}
}

// ofKind is the table's first operation of a kind.
func ofKind(t *testing.T, kind string) ops.Operation {
	t.Helper()
	for _, op := range ops.Operations() {
		if op.Kind() == kind {
			return op
		}
	}
	t.Fatalf("no %s operation", kind)
	return ops.Operation{}
}

// TestPolicyOfAWrite: an authenticated write (any method but GET) first
// may read the token it is called with and its user (the write-time
// check); a GET and the public login do not; a builder taking the cursors
// may read their key.
func TestPolicyOfAWrite(t *testing.T) {
	for _, op := range ops.Operations() {
		if op.Kind() != "API" {
			continue
		}
		pol := op.Policy("")
		check := len(pol) > 0 && slices.Equal(pol[0].Actions, []string{"dynamodb:BatchGetItem"}) &&
			slices.Equal(pol[0].Keys, []string{store.KeyUser, store.KeyToken})
		if want := op.Method != "GET" && !op.Public; check != want {
			t.Errorf("%s %s: the write-time check is its first statement: %v; want %v", op.Method, op.Path, check, want)
		}
	}
	get := ops.Operation{Name: "list-things", Method: "GET", Path: "/api/things"}
	pol := get.Policy("api.ListThings(d.Store(), d.Cursors(), d.Log()).Handle")
	if len(pol) != 1 || pol[0].Resource != "!Ref CursorKey" || pol[0].Actions[0] != "secretsmanager:GetSecretValue" {
		t.Errorf("a listing's policy = %+v; want the cursors' key alone", pol)
	}
	if env := get.Environment("api.ListThings(d.Store(), d.Cursors(), d.Log()).Handle"); len(env) != 1 || env[0][0] != "CURSOR_KEY_ID" {
		t.Errorf("a listing's environment = %v; want CURSOR_KEY_ID", env)
	}
}

// keysIn is what a key argument of a grant in f names: a qualified
// identifier itself; of a list of keys (f's functions such as
// writeCheckKeys, []string{...}, append), the keys of its elements; ""
// for anything else.
func keysIn(f *ast.File, e ast.Expr) []string {
	switch e := e.(type) {
	case *ast.CompositeLit:
		var out []string
		for _, el := range e.Elts {
			out = append(out, keysIn(f, el)...)
		}
		return out
	case *ast.CallExpr:
		fn, ok := e.Fun.(*ast.Ident)
		if !ok {
			break
		}
		if fn.Name == "append" {
			var out []string
			for _, a := range e.Args {
				out = append(out, keysIn(f, a)...)
			}
			return out
		}
		obj := f.Scope.Lookup(fn.Name)
		if obj == nil {
			break
		}
		if d, ok := obj.Decl.(*ast.FuncDecl); ok && len(e.Args) == 0 && len(d.Body.List) == 1 {
			if ret, ok := d.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
				return keysIn(f, ret.Results[0])
			}
		}
	}
	return []string{selector(e)}
}

// TestGrantsNameTheStoresKeys: every leading key the table grants is one
// of the store's key constants (store.Key...), never a string written in
// the table, so that the policies follow the store's keys.
func TestGrantsNameTheStoresKeys(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ops.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, ok := call.Fun.(*ast.Ident)
		if !ok || (fn.Name != "onTable" && fn.Name != "onIndex") {
			return true
		}
		calls++
		first := 1
		if fn.Name == "onIndex" {
			first = 2
		}
		for _, arg := range call.Args[first:] {
			for _, sel := range keysIn(f, arg) {
				if !strings.HasPrefix(sel, "store.Key") {
					t.Errorf("%s grants %s; want a store.Key constant", fn.Name, sel)
				}
			}
		}
		return true
	})
	if calls < len(ops.Operations()) {
		t.Errorf("found %d grants on the table in ops.go; want one at least per operation", calls)
	}
}
