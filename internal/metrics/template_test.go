package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/metrics"
)

// resources are template.yaml's resources by logical id.
func resources(t *testing.T) map[string]*yaml.Node {
	t.Helper()
	b, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	res := field(doc.Content[0], "Resources")
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(res.Content); i += 2 {
		out[res.Content[i].Value] = res.Content[i+1]
	}
	return out
}

// field is the value of key in mapping n, or nil.
func field(n *yaml.Node, key string) *yaml.Node {
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

// scangateMetrics are the metric names of every mapping under n whose
// Namespace is scangate (an alarm's, or a metric of its Metrics).
func scangateMetrics(n *yaml.Node) []string {
	var out []string
	if ns := field(n, "Namespace"); ns != nil && ns.Value == metrics.Namespace {
		name := ""
		if m := field(n, "MetricName"); m != nil {
			name = m.Value
		}
		out = append(out, name)
	}
	for _, c := range n.Content {
		out = append(out, scangateMetrics(c)...)
	}
	return out
}

// TestTemplateAlarms: every alarm of the template sends to AlarmTopicArn;
// every one on the scangate namespace names a metric the code emits
// (metrics.Names), and there are such alarms; the operations dashboard
// shows every alarm, and graphs only metrics the code emits.
func TestTemplateAlarms(t *testing.T) {
	res := resources(t)
	var alarms []string
	own := 0
	for id, r := range res {
		if field(r, "Type").Value != "AWS::CloudWatch::Alarm" {
			continue
		}
		alarms = append(alarms, id)
		props := field(r, "Properties")
		if a := field(props, "AlarmActions"); a == nil || !regexp.MustCompile(`AlarmTopicArn`).MatchString(dump(a)) {
			t.Errorf("%s does not send to AlarmTopicArn", id)
		}
		for _, name := range scangateMetrics(props) {
			own++
			if !slices.Contains(metrics.Names, name) {
				t.Errorf("%s watches scangate %q, which the code does not emit", id, name)
			}
		}
	}
	if own < 2 || len(alarms) < 10 {
		t.Fatalf("%d alarms, %d on the scangate namespace", len(alarms), own)
	}
	dash := field(res["OperationsDashboard"], "Properties")
	if dash == nil {
		t.Fatal("no OperationsDashboard")
	}
	body := field(dash, "DashboardBody").Content[0].Value // !Sub [body, vars]
	for _, id := range alarms {
		if !regexp.MustCompile(`"\$\{` + id + `\.Arn\}"`).MatchString(body) {
			t.Errorf("the dashboard does not show %s", id)
		}
	}
	var d struct {
		Widgets []struct {
			Properties struct {
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(regexp.MustCompile(`\$\{[^}]+\}`).ReplaceAllString(body, "x")), &d); err != nil {
		t.Fatalf("the dashboard's body is not JSON: %v", err)
	}
	graphed := 0
	for _, w := range d.Widgets {
		ns := ""
		var name string
		for _, row := range w.Properties.Metrics {
			if s, _ := row[0].(string); s != "..." {
				ns, name = s, row[1].(string)
			}
			if ns == metrics.Namespace {
				graphed++
				if !slices.Contains(metrics.Names, name) {
					t.Errorf("the dashboard graphs scangate %q, which the code does not emit", name)
				}
			}
		}
	}
	if graphed == 0 {
		t.Error("the dashboard graphs no scangate metric")
	}
	sort.Strings(alarms)
	t.Logf("alarms: %v", alarms)
}

func dump(n *yaml.Node) string {
	b, _ := yaml.Marshal(n)
	return string(b)
}
