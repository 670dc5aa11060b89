package trigger_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/scangate/scangate/internal/trigger"
)

// site records what the custom resource asks of the dashboard's bucket.
type site struct {
	calls []string
	err   error
}

func (s *site) Publish(_ context.Context, bucket, apiURL string) (int, error) {
	s.calls = append(s.calls, "publish "+bucket+" "+apiURL)
	return 18, s.err
}

func (s *site) Empty(_ context.Context, bucket string) error {
	s.calls = append(s.calls, "empty "+bucket)
	return s.err
}

// TestPublishDashboard runs the custom resource's function as
// CloudFormation does and reads the answer it PUTs to the response URL:
// Create and Update publish into the bucket for the API and succeed under
// an id naming the bucket; Delete empties the bucket; a failure, or
// missing properties, answer FAILED with the reason (never silence, which
// would leave the stack waiting).
func TestPublishDashboard(t *testing.T) {
	var answers []cfn.Response
	cf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var resp cfn.Response
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || json.Unmarshal(b, &resp) != nil {
			t.Errorf("CloudFormation got %s %s", r.Method, b)
		}
		answers = append(answers, resp)
	}))
	defer cf.Close()
	props := map[string]any{"ServiceToken": "arn", "Bucket": "dash-bucket", "ApiUrl": "https://a1.execute-api.eu-west-1.amazonaws.com/prod/api"}
	cases := []struct {
		name   string
		ev     cfn.Event
		err    error
		calls  []string
		status cfn.StatusType
		id     string
	}{
		{"create", cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: props}, nil,
			[]string{"publish dash-bucket https://a1.execute-api.eu-west-1.amazonaws.com/prod/api"}, cfn.StatusSuccess, "dashboard:dash-bucket"},
		{"update", cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: "dashboard:dash-bucket", ResourceProperties: props}, nil,
			[]string{"publish dash-bucket https://a1.execute-api.eu-west-1.amazonaws.com/prod/api"}, cfn.StatusSuccess, "dashboard:dash-bucket"},
		{"delete", cfn.Event{RequestType: cfn.RequestDelete, PhysicalResourceID: "dashboard:dash-bucket", ResourceProperties: props}, nil,
			[]string{"empty dash-bucket"}, cfn.StatusSuccess, "dashboard:dash-bucket"},
		{"failed create", cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: props}, errors.New("access denied"),
			[]string{"publish dash-bucket https://a1.execute-api.eu-west-1.amazonaws.com/prod/api"}, cfn.StatusFailed, "req"},
		{"failed update", cfn.Event{RequestType: cfn.RequestUpdate, PhysicalResourceID: "dashboard:dash-bucket", ResourceProperties: props}, errors.New("access denied"),
			[]string{"publish dash-bucket https://a1.execute-api.eu-west-1.amazonaws.com/prod/api"}, cfn.StatusFailed, "dashboard:dash-bucket"},
		{"no bucket", cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: map[string]any{"ApiUrl": "https://x"}}, nil, nil, cfn.StatusFailed, "req"},
		{"delete of a failed create", cfn.Event{RequestType: cfn.RequestDelete, PhysicalResourceID: "req", ResourceProperties: props}, nil,
			[]string{"empty dash-bucket"}, cfn.StatusSuccess, "req"},
	}
	for _, c := range cases {
		answers = nil
		s := &site{err: c.err}
		c.ev.RequestID, c.ev.ResponseURL, c.ev.LogicalResourceID, c.ev.StackID = "req", cf.URL, "Dashboard", "stack"
		h := trigger.PublishDashboard(s, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if _, err := h(context.Background(), c.ev); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if len(answers) != 1 {
			t.Fatalf("%s: %d answers to CloudFormation", c.name, len(answers))
		}
		a := answers[0]
		if a.Status != c.status || a.PhysicalResourceID != c.id || a.RequestID != "req" || a.LogicalResourceID != "Dashboard" || a.StackID != "stack" ||
			c.status == cfn.StatusFailed && a.Reason == "" || len(s.calls) != len(c.calls) || len(c.calls) > 0 && s.calls[0] != c.calls[0] {
			t.Errorf("%s: answered %+v after %v", c.name, a, s.calls)
		}
	}
}
