package ops_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/ops"
)

// adoptedNames are the functions of testdata/handwritten.yaml: their
// resources as template.yaml held them when they were written by hand.
var adoptedNames = []string{"login", "get-scan", "create-allowlist", "expire-allowlists", "list-audit"}

// TestAdoptHandWrittenFunctions: the resources of five functions written
// by hand (a public route, a GET, a write with a work queue, a listing
// with indexes and the cursors' key, a schedule with a dead-letter
// queue), beside table entries holding only their names and builders,
// become the entries' fields that generate the same blocks: for the API
// functions exactly the fields the table holds; the resources and their
// log groups leave the template.
func TestAdoptHandWrittenFunctions(t *testing.T) {
	src, err := os.ReadFile("ops.go")
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := readRepo("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hand, err := os.ReadFile("testdata/handwritten.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Before: the entries bare, the template's generated blocks without
	// them and their hand-written resources after the blocks.
	var table []ops.Operation
	oldSrc, without := string(src), string(tpl)
	for _, op := range ops.Operations() {
		if slices.Contains(adoptedNames, op.Name) {
			fields := entryFields(t, oldSrc, op.Name)
			oldSrc = strings.Replace(oldSrc, fields, "\n", 1)
			op = ops.Operation{Name: op.Name, API: op.API, Schedule: op.Schedule}
			block := regexp.MustCompile(`(?s)\n  ` + ops.LogicalID(op.Name) + `:\n.*?\n\n`)
			without = block.ReplaceAllString(without, "\n")
		}
		table = append(table, op)
	}
	end := "  # ---- End of the generated functions ----\n"
	oldTpl := strings.Replace(without, end, end+"\n"+strings.SplitN(string(hand), "\n", 3)[2]+"\n", 1)

	newSrc, newTpl, ids, err := ops.Adopt(table, []byte(oldSrc), []byte(oldTpl))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(adoptedNames) {
		t.Errorf("adopted %v; want the %d of testdata/handwritten.yaml", ids, len(adoptedNames))
	}
	if string(newTpl) != without {
		t.Errorf("the template after adoption is not the template without the hand-written resources and their log groups:\n%s", newTpl)
	}
	for _, name := range adoptedNames {
		got, want := lines(entryFields(t, string(newSrc), name)), lines(entryFields(t, string(src), name))
		if name == "expire-allowlists" {
			// Its properties come back as YAML of their own (block style),
			// and its checkov reasons as the template held them.
			for _, s := range []string{`Timeout: 300`, `ReservedConcurrentExecutions: !If [ReserveConcurrency, 1, !Ref`,
				`TargetArn: !GetAtt ExpireAllowlistsDeadLetters.Arn`, `Schedule: rate(1 minute)`, `{"CKV_AWS_117",`, `{"CKV_AWS_173",`,
				`onIndex("GSI1", "Query", store.KeyFinding, store.KeyExpiry, store.KeyWorkQueue),`} {
				if !slices.Contains(got, s) && !strings.Contains(strings.Join(got, "\n"), s) {
					t.Errorf("%s: the adopted entry lacks %q:\n%s", name, s, strings.Join(got, "\n"))
				}
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the adopted entry is\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// A resource of no entry, or of an entry that already says it, is refused.
	if _, _, _, err := ops.Adopt(ops.Operations(), []byte(oldSrc), []byte(oldTpl)); err == nil {
		t.Error("adopted resources whose entries already hold their fields")
	}
	noGetScan := slices.DeleteFunc(slices.Clone(table), func(op ops.Operation) bool { return op.Name == "get-scan" })
	if _, _, _, err := ops.Adopt(noGetScan, []byte(oldSrc), []byte(oldTpl)); err == nil || !strings.Contains(err.Error(), "no entry") {
		t.Errorf("a resource without an entry: err = %v", err)
	}
	// Nothing written by hand: nothing changes.
	same, sameTpl, ids, err := ops.Adopt(ops.Operations(), src, tpl)
	if err != nil || len(ids) != 0 || string(same) != string(src) || string(sameTpl) != string(tpl) {
		t.Errorf("adopting from the repository's files changed something: %v, %v", ids, err)
	}
}

// entryFields is the text of an entry's fields in the table's source,
// from after `{Name: "<name>",` to its builder.
func entryFields(t *testing.T, src, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\{Name: "` + regexp.QuoteMeta(name) + `",(\n.*?\n)\t*(API|Schedule): func`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("no entry %s in the table's source", name)
	}
	return m[1]
}

// lines are a text's non-empty lines, trimmed and sorted.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
