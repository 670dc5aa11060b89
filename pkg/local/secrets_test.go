package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/ddbtest"
	"github.com/scangate/scangate/pkg/local"
)

// syncBuffer collects log lines from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNoSecretsStoredOrLogged runs a full workflow, then reads every item
// of the table and every log line: no password and no token appears in
// either, in any case.
func TestNoSecretsStoredOrLogged(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var logs syncBuffer
	const adminPW = "admin-Secret-Pass-1"
	stack, err := local.Start(context.Background(), local.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: adminPW,
		AuthorizerTTL: 0, TokenTTL: time.Hour, Seed: true, Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	secrets := []string{adminPW, "Xavier-Secret-Pass-2", "wrong-Secret-Pass-3"}
	admin := loginToken(t, api, "admin", adminPW)
	do(t, "POST", api+"/users", admin, `{"username":"xavier","user_email":"xavier@example.com","password":"`+secrets[1]+`","role":"user"}`)
	do(t, "POST", api+"/auth/token", "", `{"username":"xavier","password":"`+secrets[2]+`"}`)
	do(t, "POST", api+"/auth/token", "", `{"username":"nobody","password":"`+secrets[2]+`"}`)
	xavier := loginToken(t, api, "xavier", secrets[1])
	do(t, "GET", api+"/pr/scan/1", xavier, "")
	do(t, "POST", api+"/whitelist", xavier, `{"type":"SECRET","name":"sha256:5f2b9c0e8d1a","global_":true}`)
	do(t, "PUT", api+"/users/2", admin, `{"role":"user","active":false,"user_email":"xavier@example.com"}`)
	do(t, "GET", api+"/pr/scan/1", xavier, "")
	secrets = append(secrets, admin, xavier)

	out, err := env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &env.Table})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out.Items)
	stored := strings.ToLower(string(b))
	logged := strings.ToLower(logs.String())
	if !strings.Contains(logged, `"operation":"login"`) || !strings.Contains(logged, `"operation":"authorize"`) {
		t.Fatalf("the workflow logged nothing of logins and authorizations:\n%s", logged)
	}
	for _, s := range secrets {
		if strings.Contains(stored, strings.ToLower(s)) {
			t.Errorf("the table holds the secret %q", s[:8]+"...")
		}
		if strings.Contains(logged, strings.ToLower(s)) {
			t.Errorf("a log line holds the secret %q", s[:8]+"...")
		}
	}
}
