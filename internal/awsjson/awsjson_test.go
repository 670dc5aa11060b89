package awsjson_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/awsjson"
)

// TestCall: a call is one POST of the protocol's content type, naming its
// operation in X-Amz-Target and signed for the service in the region; a
// server error or a throttle is tried again, a client error is not and
// says the error's type after its namespace.
func TestCall(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) {
			http.Error(w, `{"__type":"InternalError","message":"again"}`, http.StatusInternalServerError)
		},
		func(w http.ResponseWriter) {
			http.Error(w, `{"__type":"ThrottlingException","message":"slow"}`, http.StatusBadRequest)
		},
		func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"MessageId":"m-1"}`)) },
		func(w http.ResponseWriter) {
			http.Error(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"no queue"}`, http.StatusBadRequest)
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(seen)
		seen = append(seen, r)
		mu.Unlock()
		var body map[string]any
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil || body["QueueUrl"] != "https://q" {
			http.Error(w, `{"__type":"BadRequest"}`, http.StatusBadRequest)
			return
		}
		answers[min(n, len(answers)-1)](w)
	}))
	defer srv.Close()
	env := map[string]string{"SQS_ENDPOINT": srv.URL, "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}
	c, err := awsjson.FromEnv(func(k string) string { return env[k] }, awsjson.SQS())
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ MessageID string }
	if err := c.Call(context.Background(), "AmazonSQS.SendMessage", map[string]string{"QueueUrl": "https://q"}, &out); err != nil {
		t.Fatal(err)
	}
	if out.MessageID != "m-1" || len(seen) != 3 {
		t.Fatalf("answer %+v after %d requests; want m-1 after 3", out, len(seen))
	}
	r := seen[0]
	if r.Header.Get("Content-Type") != "application/x-amz-json-1.0" || r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" ||
		!strings.Contains(r.Header.Get("Authorization"), "AKID/") || !strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/sqs/aws4_request") {
		t.Errorf("request headers %v", r.Header)
	}
	err = c.Call(context.Background(), "AmazonSQS.SendMessage", map[string]string{"QueueUrl": "https://q"}, nil)
	var apiErr *awsjson.Error
	if !errors.As(err, &apiErr) || apiErr.Type != "QueueDoesNotExist" || apiErr.Status != http.StatusBadRequest || len(seen) != 4 {
		t.Errorf("a client error: %v after %d requests; want QueueDoesNotExist, not tried again", err, len(seen))
	}
	if _, err := awsjson.FromEnv(func(string) string { return "" }, awsjson.EventBridge()); err == nil {
		t.Error("a client without a region or credentials")
	}
}

func TestEndpoint(t *testing.T) {
	for _, c := range []struct{ host, region, want string }{
		{"sqs", "us-east-1", "https://sqs.us-east-1.amazonaws.com"},
		{"events", "eu-west-3", "https://events.eu-west-3.amazonaws.com"},
		{"sqs", "cn-north-1", "https://sqs.cn-north-1.amazonaws.com.cn"},
	} {
		if got := awsjson.Endpoint(c.host, c.region); got != c.want {
			t.Errorf("Endpoint(%s, %s) = %s; want %s", c.host, c.region, got, c.want)
		}
	}
}
