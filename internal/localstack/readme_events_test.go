package localstack_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestReadmeEventsFlow runs the README's events example, as written: a
// subscription made (its secret shown once), a test event for it alone
// (202), and its deliveries listed, the test event's among them.
func TestReadmeEventsFlow(t *testing.T) {
	t.Parallel()
	got := runReadmeBlock(t, "events-flow")
	id := regexp.MustCompile(`\{"event_id":"([0-9A-Z]{26})","type":"webhook.test"\}`).FindStringSubmatch(got)
	if id == nil {
		t.Fatalf("the events flow's output lacks the test event:\n%s", got)
	}
	if !strings.Contains(got, `{"items":[{"id":"`+id[1]+`","event_id":"`+id[1]+`","type":"webhook.test"`) {
		t.Errorf("the events flow's deliveries lack the test event:\n%s", got)
	}
	if !strings.HasSuffix(got, "\n204\n") {
		t.Errorf("the events flow did not delete its subscription:\n%s", got)
	}
	if strings.Contains(got, "whsec_") {
		t.Errorf("the flow printed the signing secret, which it keeps in a variable:\n%s", got)
	}
}
