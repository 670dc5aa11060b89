package lambdarun_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/oidctest"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/store"
)

// eventsFixture adds to the fixture what the event functions need: a
// subscription (id 1) with a delivery to redeliver, n more to delete (at
// most scangate.MaxWebhooks-10: past those, delete-webhook deletes the ones
// create-webhook made, whose ids follow), an integration of vc_id 1 and n
// more to delete, and, for the binaries, their environment (the
// id of the harness's secrets key, the queues on a stand-in that takes SendMessage,
// the bus's name, loopback receivers allowed). The dispatcher's and the
// deliverer's events name an event and a delivery that do not exist, so
// that they read the table and call nothing else.
func eventsFixture(b testing.TB, st *store.Store, proxy func(method, path string, params map[string]string, body string) []byte, n int) (map[string]func(int) []byte, []string) {
	ctx := context.Background()
	box, err := seal.New([]byte(localstack.HarnessSecretsKey))
	if err != nil {
		b.Fatal(err)
	}
	who := scangate.Who{RequestID: "bench-fixture"}
	now := time.Now()
	webhook := func() scangate.Webhook {
		sealed, err := box.Seal(seal.WebhookSecret, "whsec_"+base64.StdEncoding.EncodeToString(make([]byte, 32)))
		if err != nil {
			b.Fatal(err)
		}
		w, err := st.CreateWebhook(ctx, scangate.Webhook{URL: "http://127.0.0.1:9/hook", Events: []string{scangate.EventWebhookTest},
			Active: true, Secret: sealed}, who, now)
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	first := webhook()
	idToken := benchIDToken(b, st, now)
	for range min(n, scangate.MaxWebhooks-10) {
		webhook()
	}
	e, err := st.RecordEvent(ctx, scangate.NewEvent(scangate.EventWebhookTest, now, map[string]int64{"id": first.ID}))
	if err != nil {
		b.Fatal(err)
	}
	to := scangate.Destination{Kind: scangate.DestWebhook, ID: first.ID}
	if _, _, err := st.CreateDelivery(ctx, scangate.Delivery{To: to, EventID: e.ID, EventType: e.Type,
		Status: scangate.DeliveryFailed, CreatedAt: scangate.At(now)}); err != nil {
		b.Fatal(err)
	}
	token, _ := box.Seal(seal.IntegrationToken, "ghp_bench")
	if _, err := st.PutIntegration(ctx, scangate.Integration{VcID: 1, Type: "github", APIURL: "https://api.github.com", Token: token}, who, now); err != nil {
		b.Fatal(err)
	}
	for i := range n { // integrations to delete
		if _, err := st.PutIntegration(ctx, scangate.Integration{VcID: 1000 + int64(i), Type: "github", APIURL: "https://api.github.com", Token: token}, who, now); err != nil {
			b.Fatal(err)
		}
	}
	// Trusts of CI id tokens: one named 1 (the GET route's derived event)
	// and n to delete.
	trust := scangate.Trust{Issuer: "https://token.actions.githubusercontent.com", Audience: "bench", Repos: []scangate.RepoRef{{VcID: 1, RepoID: 1}}}
	for i := range n + 1 {
		trust.Name = "1"
		if i > 0 {
			trust.Name = "del-" + strconv.Itoa(i-1)
		}
		if _, err := st.PutTrust(ctx, trust, who, now); err != nil {
			b.Fatal(err)
		}
	}
	sqs := httptest.NewServer(http.HandlerFunc(fakeSQS))
	b.Cleanup(sqs.Close)
	env := []string{"SECRETS_KEY_ID=secrets-key", // on the bench's stand-in of Secrets Manager
		"SQS_ENDPOINT=" + sqs.URL, "DELIVERY_QUEUE_URL=" + sqs.URL + "/1/fast", "RETRY_QUEUE_URL=" + sqs.URL + "/1/retry",
		"DEAD_LETTER_QUEUE_URL=" + sqs.URL + "/1/dead", "EVENT_BUS_NAME=bench", "EGRESS_LOOPBACK_HTTP=true"}
	hook := func(method, suffix string, body string) func(int) []byte {
		return func(int) []byte {
			return proxy(method, "/api/webhooks/1"+suffix, map[string]string{"webhook_id": "1"}, body)
		}
	}
	missing := newEventID()
	return map[string]func(int) []byte{
		"create-webhook": func(int) []byte {
			return proxy("POST", "/api/webhooks", nil, `{"url":"http://127.0.0.1:9/hook","events":["pr.gate_changed"]}`)
		},
		"update-webhook":        hook("PATCH", "", `{"description":"bench"}`),
		"test-webhook":          hook("POST", "/test", ""),
		"rotate-webhook-secret": hook("POST", "/rotate-secret", ""),
		"delete-webhook": func(i int) []byte {
			id := strconv.FormatInt(first.ID+1+int64(i), 10)
			return proxy("DELETE", "/api/webhooks/"+id, map[string]string{"webhook_id": id}, "")
		},
		"redeliver-webhook-delivery": func(int) []byte {
			return proxy("POST", "/api/webhooks/1/deliveries/"+e.ID+"/redeliver", map[string]string{"webhook_id": "1", "delivery_id": e.ID}, "")
		},
		"delete-integration": func(i int) []byte {
			vc := strconv.FormatInt(1000+int64(i%n), 10)
			return proxy("DELETE", "/api/integrations/"+vc, map[string]string{"vc_id": vc}, "")
		},
		"put-integration": func(int) []byte {
			return proxy("PUT", "/api/integrations/1", map[string]string{"vc_id": "1"}, `{"type":"github","token":"ghp_bench"}`)
		},
		"put-oidc-trust": func(int) []byte {
			return proxy("PUT", "/api/auth/oidc/trust/1", map[string]string{"name": "1"},
				`{"issuer":"https://token.actions.githubusercontent.com","audience":"bench","repos":[{"vc_id":1,"repo_id":1}]}`)
		},
		// An id token of a stand-in issuer on loopback that a trust of
		// the first admin names: exchanged (its keys fetched once).
		"exchange-oidc-token": func(int) []byte {
			return proxy("POST", "/api/auth/oidc/token", nil, `{"id_token":"`+idToken+`"}`)
		},
		"delete-oidc-trust": func(i int) []byte {
			name := "del-" + strconv.Itoa(i%n)
			return proxy("DELETE", "/api/auth/oidc/trust/"+name, map[string]string{"name": name}, "")
		},
		"dispatch-events": func(i int) []byte {
			return []byte(fmt.Sprintf(`{"Records":[{"eventID":"%d","eventName":"INSERT","eventSource":"aws:dynamodb",`+
				`"dynamodb":{"Keys":{"PK":{"S":"EVENT#%s"},"SK":{"S":"EVENT"}},"SequenceNumber":"%021d","StreamViewType":"KEYS_ONLY"}}]}`, i, missing, i))
		},
		"deliver-events": func(i int) []byte {
			return []byte(fmt.Sprintf(`{"Records":[{"messageId":"m%d","receiptHandle":"r%d","body":"{\"kind\":\"webhook\",\"id\":1,\"event\":\"%s\"}",`+
				`"eventSource":"aws:sqs","eventSourceARN":"arn:aws:sqs:us-east-1:1:fast"}]}`, i, i, missing))
		},
	}, env
}

// newEventID is an event id no event has.
func newEventID() string { return "01ZZZZZZZZZZZZZZZZZZZZZZZZ" }

// fakeSQS takes SendMessage (SQS's JSON protocol) and answers as SQS does,
// with the body's MD5, which the SDK checks.
func fakeSQS(w http.ResponseWriter, r *http.Request) {
	var in struct {
		MessageBody string `json:"MessageBody"`
	}
	if r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, `{"__type":"InvalidAction"}`, http.StatusBadRequest)
		return
	}
	sum := md5.Sum([]byte(in.MessageBody))
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = fmt.Fprintf(w, `{"MessageId":"bench","MD5OfMessageBody":"%s"}`, hex.EncodeToString(sum[:]))
}

// benchIDToken starts a stand-in issuer on loopback, puts a trust of it
// (the first admin's) and returns an id token it signed, valid for an
// hour, that the trust lets in.
func benchIDToken(b testing.TB, st *store.Store, now time.Time) string {
	is := oidctest.New(b)
	k := oidctest.RSAKey(b, "k1")
	is.Publish(k)
	who := scangate.Who{Actor: &scangate.Actor{UserID: 1, Username: "admin"}, RequestID: "bench-fixture"}
	if _, err := st.PutTrust(context.Background(), scangate.Trust{Name: "bench-ci", Issuer: is.URL, Audience: "bench",
		Repos: []scangate.RepoRef{{VcID: 1, RepoID: 1}}}, who, now); err != nil {
		b.Fatal(err)
	}
	claims := oidctest.GitHubClaims(is.URL, "bench", "1", now)
	claims["exp"] = now.Add(time.Hour).Unix()
	return oidctest.Sign(b, k, jose.RS256, claims)
}
