package worksqs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/scangate/scangate/internal/queue/worksqs"
)

// TestSendBatches: the messages go to the work queue ten a
// SendMessageBatch (SQS's JSON protocol), and those SQS reports failed are
// sent again, alone; a queue that keeps failing them is an error.
func TestSendBatches(t *testing.T) {
	var mu sync.Mutex
	var batches [][]string
	failFirst := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			QueueURL string `json:"QueueUrl"`
			Entries  []struct{ Id, MessageBody string }
		}
		if r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessageBatch" || json.NewDecoder(r.Body).Decode(&in) != nil || in.QueueURL != "https://sqs/1/work" {
			http.Error(w, `{"__type":"InvalidAction"}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		var bodies []string
		for _, e := range in.Entries {
			bodies = append(bodies, e.MessageBody)
		}
		batches = append(batches, bodies)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if failFirst && len(batches) == 1 { // the third message of the first batch failed
			_, _ = fmt.Fprintf(w, `{"Successful":[],"Failed":[{"Id":"%s","Code":"InternalError","Message":"again","SenderFault":false}]}`, in.Entries[2].Id)
			return
		}
		if !failFirst {
			_, _ = fmt.Fprintf(w, `{"Failed":[{"Id":"%s","Code":"InternalError","Message":"down"}]}`, in.Entries[0].Id)
			return
		}
		_, _ = w.Write([]byte(`{"Successful":[]}`))
	}))
	defer srv.Close()
	env := map[string]string{"WORK_QUEUE_URL": "https://sqs/1/work", "SQS_ENDPOINT": srv.URL}
	q, err := worksqs.Open(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for i := range 12 {
		msgs = append(msgs, fmt.Sprintf("step-%d", i))
	}
	if err := q.Send(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	want := []string{strings.Join(msgs[:10], ","), "step-2", strings.Join(msgs[10:], ",")}
	var got []string
	for _, b := range batches {
		got = append(got, strings.Join(b, ","))
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("batches\n%v\nwant\n%v", got, want)
	}
	mu.Lock()
	failFirst = false
	mu.Unlock()
	if err := q.Send(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "down") {
		t.Errorf("a message failed three times: err = %v", err)
	}
	if _, err := worksqs.Open(func(k string) string { return map[string]string{"SQS_ENDPOINT": srv.URL}[k] }); err == nil {
		t.Error("opened without WORK_QUEUE_URL")
	}
}
