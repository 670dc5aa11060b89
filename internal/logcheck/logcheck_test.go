package logcheck_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/logcheck"
	"github.com/scangate/scangate/internal/metrics"
)

// TestSinkFindsSecretsAndBadMetrics: a secret of a request's body or
// header, or of an answer, that reaches a log line is a problem, in any
// case; so is a metric line the format refuses; an emitted metric and a
// line without secrets are not.
func TestSinkFindsSecretsAndBadMetrics(t *testing.T) {
	s := logcheck.Open()
	log := s.Logger()
	srv := httptest.NewServer(s.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(b), "hunter2-Password") {
			t.Errorf("the handler lost the body: %s", b)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"sg_answered_Token_1","token_type":"Bearer","hook":{"secret":"whsec_Given_2"}}`)
	})))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"username":"u","password":"hunter2-Password"}`))
	req.Header.Set("Authorization", "Bearer sg_sent_Token_3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	s.Secret("planted-Value-4", "short")

	metrics.New(log).Emit(context.Background(), nil, metrics.CountOf(metrics.Requests, 1))
	log.Info("request", "user", "u", "token_type", "Bearer", "note", "short")
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("clean lines: %v", p)
	}
	for _, leak := range []string{"HUNTER2-password", "sg_answered_Token_1", "whsec_Given_2", "sg_sent_Token_3", "planted-Value-4"} {
		log.Info("oops", "detail", "x"+leak+"y")
	}
	_, _ = s.Write([]byte(`{"_aws":{"Timestamp":1764370000,"CloudWatchMetrics":[]}}` + "\n"))
	if p := s.Problems(); len(p) != 6 {
		t.Fatalf("%d problems, want 5 leaks and 1 bad metric line: %v", len(p), p)
	}
}
