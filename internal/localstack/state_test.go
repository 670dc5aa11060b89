package localstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/store"
)

// What make run saves when it stops is what it loads when it starts: the
// items of a table with demo data, users, tokens and an allowlist come
// back as they were (every attribute, of every type), and the service
// built on them answers as before: the admin logs in with the same
// password, a token made before still works.
func TestSaveLoadTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	first, err := localstack.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Close() }()
	stack, err := localstack.Start(ctx, localstack.Options{Template: "../../template.yaml", Table: "scangate", Endpoint: first.URL,
		AdminUsername: "admin", AdminPassword: "a chosen password-1", TokenTTL: time.Hour, Seed: true,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	api := serve(t, stack.Handler)
	admin := loginToken(t, api, "admin", "a chosen password-1")
	if resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"SECRET","name":"sha256:5f2b9c0e8d1a","global_":true,"reason":"used_in_tests","paths":["test/**"]}`); resp.StatusCode != 201 {
		t.Fatalf("allowlist: %d %s", resp.StatusCode, body)
	}
	resp, body := do(t, "POST", api+"/auth/tokens", admin, `{"name":"ci","scope":"scan"}`)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &tok) != nil {
		t.Fatalf("token: %d %s", resp.StatusCode, body)
	}
	_ = stack.Close()

	path := filepath.Join(dir, ".build", "local-state.json")
	saved, err := first.SaveTable(ctx, "scangate", path)
	if err != nil || saved < 50 {
		t.Fatalf("saved %d items: %v", saved, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v %v", fi, err)
	}

	second, err := localstack.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = second.Close() }()
	db, err := store.NewClient(ctx, second.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTable(ctx, db, "scangate"); err != nil {
		t.Fatal(err)
	}
	if n, err := second.LoadTable(ctx, "scangate", path); err != nil || n != saved {
		t.Fatalf("loaded %d of %d: %v", n, saved, err)
	}
	again := filepath.Join(dir, "again.json")
	if _, err := second.SaveTable(ctx, "scangate", again); err != nil {
		t.Fatal(err)
	}
	if a, b := items(t, path), items(t, again); !reflect.DeepEqual(a, b) {
		t.Errorf("the loaded table differs from the saved one")
	}

	stack, err = localstack.Start(ctx, localstack.Options{Template: "../../template.yaml", Table: "scangate", Endpoint: second.URL,
		AdminUsername: "admin", TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stack.Close() }()
	api = serve(t, stack.Handler)
	loginToken(t, api, "admin", "a chosen password-1")
	if resp, body := do(t, "GET", api+"/pr/scan/1", tok.AccessToken, ""); resp.StatusCode != 200 {
		t.Errorf("the token made before: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "GET", api+"/whitelist/1", admin, ""); resp.StatusCode != 200 {
		t.Errorf("the login token made before: %d %s", resp.StatusCode, body)
	}

	if _, err := second.LoadTable(ctx, "scangate", filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) || !localstack.IsNoState(err) {
		t.Errorf("no file: %v", err)
	}
	if _, err := second.LoadTable(ctx, "other", path); err == nil {
		t.Error("another table's file loaded")
	}
}

// items are a saved file's items, each as a JSON value.
func items(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Items []map[string]any }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, it := range st.Items {
		k, _ := json.Marshal([]any{it["PK"], it["SK"]})
		out[string(k)] = it
	}
	if len(out) != len(st.Items) {
		t.Fatalf("%d items, %d keys", len(st.Items), len(out))
	}
	return out
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/api"
}
