package localstack_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

// TestClientDisconnectIsNoServerError: a client that goes away while its
// request is being served is logged as such, at INFO, never as an ERROR
// 500 (API Gateway would not call that the function's failure either).
func TestClientDisconnectIsNoServerError(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var logs syncBuffer
	stack, err := localstack.Start(context.Background(), localstack.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: time.Hour, TokenTTL: time.Hour, Seed: true, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	token := loginToken(t, srv.URL+"/api", "admin", "admin-password-1")
	do(t, "GET", srv.URL+"/api/pr/scan/1", token, "") // the authorizer's answer is cached now

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := func(op string, _ any) error {
		if op == "GetItem" {
			once.Do(func() { close(entered); <-release })
		}
		return nil
	}
	env.Fault.Store(&hold)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/pr/scan/2", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	cancel() // the client goes away while the function waits on DynamoDB
	if err := <-done; err == nil {
		t.Fatal("the request was answered before the client went away")
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "client went away") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	env.Fault.Store(nil)
	got := logs.String()
	if !strings.Contains(got, "request abandoned: the client went away") {
		t.Fatalf("no line tells the client went away:\n%s", got)
	}
	if strings.Contains(got, `"level":"ERROR"`) || strings.Contains(got, `"status":500`) {
		t.Errorf("a client that went away was logged as a failure:\n%s", got)
	}
}

// TestSetPasswordIsNeverPrinted: make run prints the first admin's
// password, and writes it to its file, only when it generated it; a
// password that was set removes the file an earlier run left, which
// would name another password.
func TestSetPasswordIsNeverPrinted(t *testing.T) {
	t.Parallel()
	for _, set := range []string{"", "a-password-I-chose-1"} {
		env := ddbtest.New(t)
		file := filepath.Join(t.TempDir(), ".build", "admin-password")
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte("an-earlier-run-1"), 0o600); err != nil {
			t.Fatal(err)
		}
		stack, err := localstack.Start(context.Background(), localstack.Options{
			Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: set,
			PasswordFile: file, AuthorizerTTL: 0, TokenTTL: time.Hour, Log: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		written, err := os.ReadFile(file)
		switch {
		case set != "" && strings.Contains(stack.AdminNote, set):
			t.Errorf("the note shows the password that was set: %q", stack.AdminNote)
		case set != "" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("with a password set, the file is still there: %q %v", written, err)
		case set == "" && !strings.Contains(stack.AdminNote, "password \""):
			t.Errorf("the note does not show the generated password: %q", stack.AdminNote)
		case set == "" && (err != nil || !strings.Contains(stack.AdminNote, "password \""+string(written)+"\"")):
			t.Errorf("the file holds %q (%v); the note says %q", written, err, stack.AdminNote)
		}
		_ = stack.Close()
	}
}
