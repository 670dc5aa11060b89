package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/receivertest"
)

// The tests named TestPythonReceiver deliver to the receiver of
// internal/receivertest, which verifies signatures with the Standard
// Webhooks library for Python.

func pythonReceiver(t *testing.T, secret string, args ...string) string {
	return receivertest.Start(t, secret, args...)
}

func readLog(t *testing.T, url string) receivertest.Log { return receivertest.Read(t, url) }

func send(t *testing.T, d webhook.Delivery) webhook.Result {
	t.Helper()
	r, err := webhook.NewSender(local).Send(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPythonReceiverVerifiesADelivery(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	url := pythonReceiver(t, secret)
	d := delivery(t, url+"/hook", secret)
	if r := send(t, d); r.Outcome != webhook.Delivered || r.StatusCode != 204 {
		t.Fatalf("%+v, want delivered", r)
	}
	l := readLog(t, url)
	if len(l.Events) != 1 || l.Events[0].ID != "01HZXEVENT" || l.Events[0].Type != "webhook.test" || len(l.Rejected) != 0 {
		t.Fatalf("receiver log %+v", l)
	}
}

// A body changed after signing, or a signature by another secret, is
// refused by the receiver: the test can fail.
func TestPythonReceiverRefusesATamperedDelivery(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	url := pythonReceiver(t, secret)
	d := delivery(t, url+"/hook", secret)
	signer := d.Signer

	h := http.Header{"Content-Type": {"application/json"}}
	if err := signer.Sign(h, d.ID, time.Now(), d.Body); err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(d.Body, []byte(`"data":{}`), []byte(`"data":{"blocked":false}`), 1)
	req, _ := http.NewRequest(http.MethodPost, url+"/hook", bytes.NewReader(tampered))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a tampered body: %d, want 400", resp.StatusCode)
	}

	other, _ := webhook.NewSecret(nil)
	if r := send(t, delivery(t, url+"/hook", other)); r.Outcome != webhook.Retry || r.StatusCode != 400 {
		t.Fatalf("signed with another secret: %+v, want 400", r)
	}
	l := readLog(t, url)
	if len(l.Events) != 0 || len(l.Rejected) != 2 || !strings.Contains(l.Rejected[0].Error, "No matching signature") {
		t.Fatalf("receiver log %+v, want two rejected deliveries and no event", l)
	}
}

// While a rotated secret is live, a receiver that has only the old secret
// and one that has only the new one both verify the same delivery.
func TestPythonReceiverRotation(t *testing.T) {
	oldSecret, _ := webhook.NewSecret(nil)
	newSecret, _ := webhook.NewSecret(nil)
	signer, err := webhook.NewSigner(newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"old": oldSecret, "new": newSecret} {
		url := pythonReceiver(t, secret)
		d := delivery(t, url+"/hook", secret)
		d.Signer = signer
		if r := send(t, d); r.Outcome != webhook.Delivered {
			t.Errorf("the receiver with only the %s secret: %+v", name, r)
		}
		if l := readLog(t, url); len(l.Events) != 1 || len(l.Rejected) != 0 {
			t.Errorf("the receiver with only the %s secret: log %+v", name, l)
		}
	}
}

// A receiver that answers 500 twice gets the same delivery a third time,
// same webhook-id, same body, verified each time.
func TestPythonReceiverRetriesAfter500(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	url := pythonReceiver(t, secret, "--fail-first", "2")
	d := delivery(t, url+"/hook", secret)
	var outcomes []webhook.Outcome
	for attempt := 1; attempt <= webhook.Attempts; attempt++ {
		r := send(t, d)
		outcomes = append(outcomes, r.Outcome)
		if r.Outcome != webhook.Retry {
			break
		}
		if _, ok := webhook.Backoff(attempt, fixed(0.5)); !ok {
			break
		}
	}
	if want := []webhook.Outcome{webhook.Retry, webhook.Retry, webhook.Delivered}; !slices.Equal(outcomes, want) {
		t.Fatalf("outcomes %v, want %v", outcomes, want)
	}
	l := readLog(t, url)
	if len(l.Attempts) != 3 || len(l.Events) != 1 || len(l.Rejected) != 0 {
		t.Fatalf("receiver log %+v", l)
	}
	for i, a := range l.Attempts {
		if a.WebhookID != d.ID || a.Body != string(d.Body) || a.Status != []int{500, 500, 204}[i] {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
}

func TestPythonReceiverGone(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	url := pythonReceiver(t, secret, "--gone")
	if r := send(t, delivery(t, url+"/hook", secret)); r.Outcome != webhook.Gone || r.StatusCode != 410 {
		t.Fatalf("%+v, want gone", r)
	}
}
