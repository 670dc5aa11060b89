package deliverysqs_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/queue/deliverysqs"
)

// sqsCall is one request the stand-in got: its action and members.
type sqsCall struct {
	Action            string
	QueueURL          string `json:"QueueUrl"`
	MessageBody       string
	DelaySeconds      int
	ReceiptHandle     string
	VisibilityTimeout int
}

// standIn answers SendMessage and ChangeMessageVisibility as SQS's JSON
// protocol does.
func standIn(t *testing.T) (*httptest.Server, func() []sqsCall) {
	var mu sync.Mutex
	var calls []sqsCall
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c sqsCall
		_ = json.NewDecoder(r.Body).Decode(&c)
		c.Action = r.Header.Get("X-Amz-Target")
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if c.Action == "AmazonSQS.SendMessage" {
			sum := md5.Sum([]byte(c.MessageBody))
			_, _ = fmt.Fprintf(w, `{"MessageId":"m","MD5OfMessageBody":"%s"}`, hex.EncodeToString(sum[:]))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []sqsCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]sqsCall(nil), calls...)
	}
}

// The lanes map to the queues of the environment: a delay is rounded up
// to whole seconds and capped at SQS's 15 minutes, a hiding at 12 hours;
// a record's queue ARN names its lane.
func TestSQSLanes(t *testing.T) {
	srv, calls := standIn(t)
	env := map[string]string{"SQS_ENDPOINT": srv.URL, "DELIVERY_QUEUE_URL": srv.URL + "/123/scangate-DeliveryQueue-A1",
		"RETRY_QUEUE_URL": srv.URL + "/123/scangate-DeliveryRetryQueue-B2", "DEAD_LETTER_QUEUE_URL": srv.URL + "/123/scangate-Dead-C3"}
	q, err := deliverysqs.Open(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := q.Send(ctx, deliverylane.Retry, `{"kind":"webhook"}`, 4200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(ctx, deliverylane.Fast, "b", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := q.Hide(ctx, deliverylane.Retry, "receipt-1", 30*time.Hour); err != nil {
		t.Fatal(err)
	}
	got := calls()
	want := []sqsCall{
		{Action: "AmazonSQS.SendMessage", QueueURL: env["RETRY_QUEUE_URL"], MessageBody: `{"kind":"webhook"}`, DelaySeconds: 5},
		{Action: "AmazonSQS.SendMessage", QueueURL: env["DELIVERY_QUEUE_URL"], MessageBody: "b", DelaySeconds: 900},
		{Action: "AmazonSQS.ChangeMessageVisibility", QueueURL: env["RETRY_QUEUE_URL"], ReceiptHandle: "receipt-1", VisibilityTimeout: 43200},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls\n%+v\nwant\n%+v", got, want)
	}
	for arn, want := range map[string]deliverylane.Lane{
		"arn:aws:sqs:eu-west-1:123:scangate-DeliveryQueue-A1":      deliverylane.Fast,
		"arn:aws:sqs:eu-west-1:123:scangate-DeliveryRetryQueue-B2": deliverylane.Retry,
	} {
		if l, ok := q.LaneOf(arn); !ok || l != want {
			t.Errorf("LaneOf(%s) = %s %v", arn, l, ok)
		}
	}
	if _, ok := q.LaneOf("arn:aws:sqs:eu-west-1:123:other"); ok {
		t.Error("an unknown queue has a lane")
	}
	if _, err := deliverysqs.Open(func(k string) string { return map[string]string{"DELIVERY_QUEUE_URL": "x"}[k] }); err == nil {
		t.Error("opened without the retry queue")
	}
}
