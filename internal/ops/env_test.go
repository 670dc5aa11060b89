package ops_test

import (
	"go/ast"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/ops"
)

// envOf names the environment variables each client a main may build
// reads, and without which it refuses to start (the function then fails
// every invocation on AWS): the work queue's, the delivery queues', the
// event bus's, the uploads bucket's, the secrets' box and the cursors'
// key.
var envOf = map[string][]string{
	"workq.Open":      {"WORK_QUEUE_URL"},
	"queue.Open":      {"DELIVERY_QUEUE_URL", "RETRY_QUEUE_URL"},
	"bus.Open":        {"EVENT_BUS_NAME"},
	"bucket.Open":     {"UPLOADS_BUCKET"},
	"keys.SecretsKey": {"SECRETS_KEY_ID"},
	"keys.CursorKey":  {"CURSOR_KEY_ID"},
}

// TestMainsHaveTheirEnvironment: every variable a functions/<op>/main.go
// needs to start (by the clients it builds) is set for that function in
// template.yaml, in its own Environment or the Globals'.
func TestMainsHaveTheirEnvironment(t *testing.T) {
	b, err := os.ReadFile(repo + "template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type env struct {
		Environment struct {
			Variables map[string]yaml.Node `yaml:"Variables"`
		} `yaml:"Environment"`
	}
	var doc struct {
		Globals struct {
			Function env `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Properties env `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops.Operations() {
		f := parseMain(t, op.Name)
		var need []string
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				need = append(need, envOf[selector(call.Fun)]...)
			}
			return true
		})
		res, ok := doc.Resources[ops.LogicalID(op.Name)]
		if !ok {
			t.Errorf("template.yaml has no %s", ops.LogicalID(op.Name))
			continue
		}
		for _, v := range need {
			_, own := res.Properties.Environment.Variables[v]
			_, global := doc.Globals.Function.Environment.Variables[v]
			if !own && !global {
				t.Errorf("functions/%s/main.go needs %s to start; template.yaml's %s does not set it", op.Name, v, ops.LogicalID(op.Name))
			}
		}
	}
}

// TestNoKeyInAFunctionsConfiguration (issue 30, item 7): no function's
// environment (its own or the Globals') holds a key or a dynamic reference
// that CloudFormation would resolve into one: whoever may read a function's
// configuration must not read the keys. The functions that need a key get
// its secret's id and read it at run time (SECRETS_KEY_ID, CURSOR_KEY_ID).
func TestNoKeyInAFunctionsConfiguration(t *testing.T) {
	b, err := os.ReadFile(repo + "template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Globals   map[string]yaml.Node `yaml:"Globals"`
		Resources map[string]yaml.Node `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(where string, n yaml.Node) {
		var r struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Environment struct {
					Variables map[string]yaml.Node `yaml:"Variables"`
				} `yaml:"Environment"`
			} `yaml:"Properties"`
			Environment struct {
				Variables map[string]yaml.Node `yaml:"Variables"`
			} `yaml:"Environment"`
		}
		if err := n.Decode(&r); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		vars := r.Properties.Environment.Variables
		if len(vars) == 0 {
			vars = r.Environment.Variables
		}
		for name, v := range vars {
			text, _ := yaml.Marshal(&v)
			if strings.Contains(string(text), "{{resolve:") {
				t.Errorf("%s: %s is a dynamic reference, resolved into the function's configuration: %s", where, name, text)
			}
			if name == "SECRETS_KEY" || name == "CURSOR_KEY" {
				t.Errorf("%s: %s is in the function's configuration", where, name)
			}
		}
	}
	for id, n := range doc.Resources {
		check(id, n)
	}
	if f, ok := doc.Globals["Function"]; ok {
		check("Globals", f)
	}
}
