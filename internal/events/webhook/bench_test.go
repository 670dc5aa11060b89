package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/scangate/scangate/internal/events/webhook"
)

// BenchmarkSend signs and delivers events one after the other to a local
// receiver that answers 204, over one kept-alive connection: the cost of an
// attempt without the network's latency.
//
//	go test -run '^$' -bench Send -benchtime 5s ./internal/events/webhook
func BenchmarkSend(b *testing.B) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	secret, _ := webhook.NewSecret(nil)
	signer, _ := webhook.NewSigner(secret)
	body := []byte(`{"id":"01HZXEVENT00000000000000000","type":"pr.gate_changed","occurred_at":"2026-03-01T12:00:00.000Z",` +
		`"data":{"pr_id":42,"blocked":true,"previous_blocked":false,"cause":"allowlist.updated","sequence":7,` +
		`"reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":9,"count":2}]}}`)
	d := webhook.Delivery{URL: srv.URL + "/hook", ID: "01HZXEVENT00000000000000000", Body: body, Signer: signer}
	s := webhook.NewSender(local)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := s.Send(ctx, d)
		if err != nil || r.Outcome != webhook.Delivered {
			b.Fatalf("%+v %v", r, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if n := conns.Load(); n != 1 {
		b.Fatalf("%d connections, want 1 reused", n)
	}
}
