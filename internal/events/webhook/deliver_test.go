package webhook_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/webhook"
)

// local is the policy of the local stack and tests: http to loopback.
var local = egress.Policy{LoopbackHTTP: true}

// received is what a Go receiver saw of one request.
type received struct {
	header http.Header
	body   []byte
	err    error // its verification with the Go reference library
}

// goReceiver answers every request with status and answer, verifying its
// signature with the secret.
func goReceiver(t *testing.T, secret string, status int, answer string) (*httptest.Server, func() []received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), body, wh.Verify(body, r.Header)})
		mu.Unlock()
		if status >= 300 && status < 400 {
			w.Header().Set("Location", "/moved")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

func delivery(t *testing.T, url, secret string) webhook.Delivery {
	t.Helper()
	s, err := webhook.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"01HZXEVENT","type":"webhook.test","occurred_at":"2026-03-01T12:00:00.000Z","data":{}}`)
	return webhook.Delivery{URL: url, ID: "01HZXEVENT", Body: body, Signer: s}
}

// A delivery is a signed POST of the body that the receiver verifies with
// the reference library; its retry carries the same webhook-id and body.
func TestSendSignedPost(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	srv, got := goReceiver(t, secret, http.StatusNoContent, "")
	d := delivery(t, srv.URL+"/hook", secret)
	for range 2 {
		r, err := webhook.NewSender(local).Send(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != webhook.Delivered || r.StatusCode != 204 || r.Error != "" {
			t.Fatalf("result %+v, want delivered", r)
		}
	}
	reqs := got()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		if req.err != nil {
			t.Errorf("request %d: %v", i, req.err)
		}
		if string(req.body) != string(d.Body) || req.header.Get("webhook-id") != "01HZXEVENT" ||
			req.header.Get("Content-Type") != "application/json" || req.header.Get("User-Agent") != webhook.UserAgent {
			t.Errorf("request %d: headers %v body %s", i, req.header, req.body)
		}
	}
}

func TestSendClassifiesAnswers(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	cases := []struct {
		status  int
		outcome webhook.Outcome
		err     string
	}{
		{200, webhook.Delivered, ""},
		{202, webhook.Delivered, ""},
		{204, webhook.Delivered, ""},
		{410, webhook.Gone, "410"},
		{500, webhook.Retry, "answered 500"},
		{503, webhook.Retry, "answered 503"},
		{404, webhook.Retry, "answered 404"},
		{400, webhook.Retry, "answered 400"},
		{429, webhook.Retry, "answered 429"},
		{301, webhook.Retry, "redirects are not followed"},
		{302, webhook.Retry, "redirects are not followed"},
		{307, webhook.Retry, "redirects are not followed"},
		{308, webhook.Retry, "redirects are not followed"},
	}
	for _, c := range cases {
		srv, got := goReceiver(t, secret, c.status, "answer")
		r, err := webhook.NewSender(local).Send(context.Background(), delivery(t, srv.URL, secret))
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != c.outcome || r.StatusCode != c.status || !strings.Contains(r.Error, c.err) || (c.err == "") != (r.Error == "") {
			t.Errorf("status %d: %+v, want %s with an error naming %q", c.status, r, c.outcome, c.err)
		}
		if n := len(got()); n != 1 {
			t.Errorf("status %d: %d requests, want 1 (no redirect followed)", c.status, n)
		}
	}
}

func TestSendKeepsAtMostOneKiBOfTheAnswer(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	for _, answer := range []string{
		strings.Repeat("x", 5000),
		strings.Repeat("x", 1023) + "é and more", // é straddles the 1 KiB boundary
		"short",
		"bad \xff byte",
	} {
		srv, _ := goReceiver(t, secret, 500, answer)
		r, _ := webhook.NewSender(local).Send(context.Background(), delivery(t, srv.URL, secret))
		if len(r.Response) > webhook.MaxResponse || !utf8.ValidString(r.Response) {
			t.Errorf("kept %d bytes, valid UTF-8 %v", len(r.Response), utf8.ValidString(r.Response))
		}
		want := answer
		switch {
		case len(answer) == 5000:
			want = answer[:1024]
		case strings.HasSuffix(answer, "and more"):
			want = answer[:1023]
		case strings.Contains(answer, "\xff"):
			want = "bad ? byte"
		}
		if r.Response != want {
			t.Errorf("kept %q, want %q", r.Response, want)
		}
	}
}

// A receiver that never answers is a timeout, retried.
func TestSendTimeout(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select { // never answers; returns when the sender gives up, or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	s := webhook.NewSender(local)
	s.Client = local.Client(50 * time.Millisecond)
	r, err := s.Send(context.Background(), delivery(t, srv.URL, secret))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != webhook.Retry || r.StatusCode != 0 || !strings.HasPrefix(r.Error, "timeout") {
		t.Fatalf("%+v, want a timeout to retry", r)
	}
}

func TestSendConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	secret, _ := webhook.NewSecret(nil)
	r, err := webhook.NewSender(local).Send(context.Background(), delivery(t, "http://"+addr+"/hook", secret))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != webhook.Retry || r.Error != "connection refused" {
		t.Fatalf("%+v, want a refused connection to retry", r)
	}
}

// A URL or address the policy refuses is a failed attempt whose error says
// why and never shows the URL (its query may hold the receiver's token).
func TestSendRefusedDestination(t *testing.T) {
	secret, _ := webhook.NewSecret(nil)
	srv, got := goReceiver(t, secret, 204, "")
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	resolver := staticResolver{"hooks.example.com": netip.MustParseAddr("127.0.0.1")}
	strict := egress.Policy{Resolver: resolver}
	cases := map[string]string{
		srv.URL + "/?token=s3cr3t":                                           "refused: must use https",
		"https://127.0.0.1:" + strconv.Itoa(port) + "/?token=s3cr3t":         "refused: 127.0.0.1 is a loopback address",
		"https://hooks.example.com:" + strconv.Itoa(port) + "/?token=s3cr3t": "refused: 127.0.0.1 is a loopback address",
	}
	for url, want := range cases {
		r, err := webhook.NewSender(strict).Send(context.Background(), delivery(t, url, secret))
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != webhook.Retry || r.Error != want || strings.Contains(r.Error, "s3cr3t") {
			t.Errorf("%s: %+v, want %q", url, r, want)
		}
	}
	if n := len(got()); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

type staticResolver map[string]netip.Addr

func (s staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
