package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/localstack"
)

// With the table kept, the admin keeps its password: make run says so when
// SCANGATE_ADMIN_PASSWORD is another, or when none is set and no generated
// one is on file, and says nothing when the password works.
func TestCheckKeptAdmin(t *testing.T) {
	stack, err := localstack.Start(context.Background(), localstack.Options{Template: "../../template.yaml", Table: "scangate",
		AdminUsername: "admin", AdminPassword: "the first password-1", TokenTTL: time.Hour,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stack.Close() }()
	file := filepath.Join(t.TempDir(), "admin-password")
	if w := checkKeptAdmin(stack.Handler, "admin", "the first password-1", file); w != "" {
		t.Errorf("the right password: %q", w)
	}
	if w := checkKeptAdmin(stack.Handler, "admin", "another password-2", file); !strings.Contains(w, "SCANGATE_ADMIN_PASSWORD is not the kept admin's password (logging in with it answered 401)") {
		t.Errorf("another password: %q", w)
	}
	if w := checkKeptAdmin(stack.Handler, "admin", "", file); !strings.Contains(w, "was set with SCANGATE_ADMIN_PASSWORD") {
		t.Errorf("no password, no file: %q", w)
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if w := checkKeptAdmin(stack.Handler, "admin", "", file); w != "" {
		t.Errorf("the generated password on file: %q", w)
	}
}
