package api_test

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/gateway"
)

func TestLogicalID(t *testing.T) {
	for name, want := range map[string]string{
		"get-scan": "GetScanFunction", "authorizer": "AuthorizerFunction",
		"create-allowlist": "CreateAllowlistFunction", "record-scan-sarif": "RecordScanSarifFunction",
	} {
		if got := api.LogicalID(name); got != want {
			t.Errorf("LogicalID(%q) = %q; want %q", name, got, want)
		}
	}
}

// repo is where the repository's files are, from this package.
const repo = "../../"

// TestOperationsAgree keeps the four places that name the functions in
// step: the directories of functions/, api.Operations(), template.yaml's
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
	for _, p := range checkOperations(api.Operations(), dirs, tpl, openapi) {
		t.Error(p)
	}
}

// TestMainsCallTheirConstructor: each functions/<op>/main.go starts, under
// its name, the constructor of its table entry, and none calls Operations(), which would
// link every handler into every Lambda.
func TestMainsCallTheirConstructor(t *testing.T) {
	for _, op := range api.Operations() {
		var fn any = op.API
		switch {
		case op.Authorizer != nil:
			fn = op.Authorizer
		case op.S3 != nil:
			fn = op.S3
		case op.Schedule != nil:
			fn = op.Schedule
		case op.CustomResource != nil:
			fn = op.CustomResource
		}
		name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
		ctor := "api." + name[strings.LastIndex(name, ".")+1:]
		b, err := os.ReadFile(repo + "functions/" + op.Name + "/main.go")
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`\bboot\.Start\("` + op.Name + `", ` + regexp.QuoteMeta(ctor) + `\b`).Match(b) {
			t.Errorf("functions/%s/main.go does not start %s", op.Name, ctor)
		}
		if strings.Contains(string(b), "Operations(") {
			t.Errorf("functions/%s/main.go calls Operations()", op.Name)
		}
	}
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
	ops := api.Operations()
	if p := checkOperations(ops, dirs, tpl, openapi); len(p) != 0 {
		t.Fatalf("the repository itself disagrees: %v", p)
	}
	without := func(list []string, s string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(v string) bool { return v == s })
	}
	withoutRoute := func(routes []gateway.Route, fn string) []gateway.Route {
		return slices.DeleteFunc(slices.Clone(routes), func(r gateway.Route) bool { return r.Function == fn })
	}
	cases := map[string]func() ([]api.Operation, []string, gateway.Template, []string){
		"a directory without an operation": func() ([]api.Operation, []string, gateway.Template, []string) {
			return ops, append(slices.Clone(dirs), "delete-scan"), *tpl, openapi
		},
		"an operation without a directory": func() ([]api.Operation, []string, gateway.Template, []string) {
			return ops, without(dirs, "get-scan"), *tpl, openapi
		},
		"an operation missing from the table": func() ([]api.Operation, []string, gateway.Template, []string) {
			return ops[1:], dirs, *tpl, openapi
		},
		"a template function without an operation": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Functions = append(slices.Clone(tpl.Functions), "DeleteScanFunction")
			return ops, dirs, t2, openapi
		},
		"an operation missing from the template": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Functions = without(tpl.Functions, "GetScanFunction")
			t2.Routes = withoutRoute(tpl.Routes, "GetScanFunction")
			return ops, dirs, t2, openapi
		},
		"an API operation without a route": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.Routes = withoutRoute(tpl.Routes, "GetScanFunction")
			return ops, dirs, t2, without(openapi, "GET /api/pr/scan/{pr_scan_id}")
		},
		"a route missing from openapi.yaml": func() ([]api.Operation, []string, gateway.Template, []string) {
			return ops, dirs, *tpl, without(openapi, "GET /api/pr/scan/{pr_scan_id}")
		},
		"a route only in openapi.yaml": func() ([]api.Operation, []string, gateway.Template, []string) {
			return ops, dirs, *tpl, append(slices.Clone(openapi), "DELETE /api/pr/scan/{pr_scan_id}")
		},
		"the authorizer as an API operation": func() ([]api.Operation, []string, gateway.Template, []string) {
			ops2 := slices.Clone(ops)
			for i := range ops2 {
				if ops2[i].Authorizer != nil {
					ops2[i] = api.Operation{Name: ops2[i].Name, API: api.NewGetScan}
				}
			}
			return ops2, dirs, *tpl, openapi
		},
		"an S3 operation without its S3 event": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.S3Events = nil
			return ops, dirs, t2, openapi
		},
		"an S3 event of an API operation": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.S3Events = append(slices.Clone(tpl.S3Events), gateway.S3Event{Function: "GetScanFunction", Prefix: "uploads/"})
			return ops, dirs, t2, openapi
		},
		"a custom resource operation without its resource": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.CustomResources = nil
			return ops, dirs, t2, openapi
		},
		"a custom resource invoking an API operation": func() ([]api.Operation, []string, gateway.Template, []string) {
			t2 := *tpl
			t2.CustomResources = map[string]string{"GetScanFunction": "Dashboard"}
			for k, v := range tpl.CustomResources {
				t2.CustomResources[k] = v
			}
			return ops, dirs, t2, openapi
		},
		"an operation of no kind": func() ([]api.Operation, []string, gateway.Template, []string) {
			ops2 := slices.Clone(ops)
			ops2[1] = api.Operation{Name: ops2[1].Name}
			return ops2, dirs, *tpl, openapi
		},
	}
	for name, alter := range cases {
		ops, dirs, tpl, openapi := alter()
		if p := checkOperations(ops, dirs, &tpl, openapi); len(p) == 0 {
			t.Errorf("%s: the check found nothing", name)
		} else {
			t.Logf("%s: %v", name, p)
		}
	}
}

// checkOperations returns every disagreement between the operations table,
// the function directories, the template and the OpenAPI routes.
func checkOperations(ops []api.Operation, dirs []string, tpl *gateway.Template, openapi []string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var names, ids []string
	routes := map[string]int{}
	for _, r := range tpl.Routes {
		routes[r.Function]++
	}
	s3Events := map[string]int{}
	for _, ev := range tpl.S3Events {
		s3Events[ev.Function]++
	}
	for _, op := range ops {
		names = append(names, op.Name)
		id := api.LogicalID(op.Name)
		ids = append(ids, id)
		kinds := 0
		for _, set := range []bool{op.API != nil, op.Authorizer != nil, op.S3 != nil, op.Schedule != nil, op.CustomResource != nil} {
			if set {
				kinds++
			}
		}
		switch {
		case kinds != 1:
			bad("operation %s must have exactly one handler kind", op.Name)
		case op.S3 != nil && s3Events[id] == 0:
			bad("S3 operation %s has no S3 event in template.yaml", op.Name)
		case op.S3 == nil && s3Events[id] > 0:
			bad("operation %s is not an S3 handler, but an S3 event of template.yaml invokes %s", op.Name, id)
		case op.Schedule != nil && tpl.Schedules[id] == "":
			bad("scheduled operation %s has no schedule in template.yaml", op.Name)
		case op.Schedule == nil && tpl.Schedules[id] != "":
			bad("template.yaml schedules %s, which is not a scheduled operation", id)
		case op.CustomResource != nil && tpl.CustomResources[id] == "":
			bad("custom resource operation %s is the ServiceToken of no custom resource of template.yaml", op.Name)
		case op.CustomResource == nil && tpl.CustomResources[id] != "":
			bad("template.yaml's custom resource %s invokes %s, which is not a custom resource operation", tpl.CustomResources[id], id)
		case op.API != nil && routes[id] == 0:
			bad("API operation %s has no route in template.yaml", op.Name)
		case op.Authorizer != nil && tpl.Authorizer.Function != id:
			bad("operation %s is an authorizer, but template.yaml's authorizer is %s", op.Name, tpl.Authorizer.Function)
		case op.API == nil && routes[id] > 0:
			bad("operation %s is not an API handler, but template.yaml routes to %s", op.Name, id)
		}
	}
	if i := slices.IndexFunc(ops, func(op api.Operation) bool { return api.LogicalID(op.Name) == tpl.Authorizer.Function }); i < 0 || ops[i].Authorizer == nil {
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
	bad2("function", names, dirs, "api.Operations()", "functions/")
	bad2("function", ids, tpl.Functions, "api.Operations()", "template.yaml")
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
