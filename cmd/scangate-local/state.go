package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/store"
)

// kept is the state make run keeps across restarts: the embedded server,
// its table loaded from a file, and the keys the table's sealed values and
// the cursors it issued need.
type kept struct {
	endpoint string               // the DynamoDB endpoint the stack uses
	embedded *localstack.Embedded // nil when nothing is kept
	table    string
	path     string // the table's file
	loaded   bool   // the table came from the file
	keys     keys
	note     string // what was kept, for people
}

// keys are the keys that seal listing cursors and stored secrets: with
// the table kept, they must be too.
type keys struct {
	Cursor  []byte `json:"cursor_key"`
	Secrets []byte `json:"secrets_key"`
}

// openState starts the embedded server and loads table from path, unless
// an endpoint is set (its server keeps its own state), path is "off", or
// fresh (then the file and the keys are replaced when it stops).
func openState(ctx context.Context, table, endpoint, path string, fresh bool) (*kept, error) {
	k := &kept{endpoint: endpoint, table: table, path: path}
	switch {
	case endpoint != "":
		k.note = "state: kept by the DynamoDB endpoint " + endpoint
		return k, nil
	case path == "off":
		k.note = "state: in memory only (SCANGATE_STATE is off or unset): nothing is kept when it stops"
		return k, nil
	}
	emb, err := localstack.StartEmbedded()
	if err != nil {
		return nil, err
	}
	k.embedded, k.endpoint = emb, emb.URL
	keyFile := filepath.Join(filepath.Dir(path), "local-keys")
	if k.keys, err = readKeys(keyFile, fresh); err != nil {
		k.close()
		return nil, err
	}
	if fresh {
		k.note = fmt.Sprintf("state: started empty (SCANGATE_FRESH=1); saved to %s when make run stops", path)
		return k, nil
	}
	db, err := store.NewClient(ctx, emb.URL)
	if err == nil {
		err = store.CreateTable(ctx, db, table)
	}
	if err != nil {
		k.close()
		return nil, err
	}
	n, err := emb.LoadTable(ctx, table, path)
	switch {
	case localstack.IsNoState(err):
		k.note = fmt.Sprintf("state: none kept yet; saved to %s when make run stops (make run FRESH=1 starts empty)", path)
	case err != nil:
		k.close()
		return nil, fmt.Errorf("%w (make run FRESH=1 starts empty and replaces it)", err)
	default:
		k.loaded = true
		k.note = fmt.Sprintf("state: %d items loaded from %s, as the last run left them (make run FRESH=1 starts empty)", n, path)
	}
	return k, nil
}

// readKeys reads the keys of file, or makes them (and writes them, 0600)
// when the file is missing or fresh.
func readKeys(file string, fresh bool) (keys, error) {
	var k keys
	b, err := os.ReadFile(file)
	switch {
	case err == nil && !fresh:
		if err := json.Unmarshal(b, &k); err != nil || len(k.Cursor) != 32 || len(k.Secrets) != 32 {
			return keys{}, fmt.Errorf("%s is not make run's keys (make run FRESH=1 starts empty and replaces it)", file)
		}
		return k, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return keys{}, fmt.Errorf("read %s: %w", file, err)
	}
	k = keys{Cursor: make([]byte, 32), Secrets: make([]byte, 32)}
	if _, err := rand.Read(k.Cursor); err != nil {
		return keys{}, err
	}
	if _, err := rand.Read(k.Secrets); err != nil {
		return keys{}, err
	}
	if b, err = json.Marshal(k); err != nil {
		return keys{}, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return keys{}, fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return keys{}, fmt.Errorf("write %s: %w", file, err)
	}
	return k, nil
}

// save writes the table to its file, when it is kept.
func (k *kept) save(ctx context.Context) error {
	if k.embedded == nil {
		return nil
	}
	n, err := k.embedded.SaveTable(ctx, k.table, k.path)
	if err != nil {
		return err
	}
	fmt.Printf("state: %d items saved to %s\n", n, k.path)
	return nil
}

func (k *kept) close() {
	if k.embedded != nil {
		_ = k.embedded.Close()
	}
}

// adminNote says how to log in; with a kept table, the admin is the one
// the first run made, with its password.
func adminNote(note string, k *kept) string {
	if !k.loaded || !strings.HasPrefix(note, "an admin exists already") {
		return note
	}
	return "admin login: the kept state's admin, with the password it had (.build/admin-password holds it when it was generated)"
}

// checkKeptAdmin says what will not work with a kept admin: a password set
// in SCANGATE_ADMIN_PASSWORD that is not the admin's (it keeps the one it
// was made with), or none set and none in passwordFile (it was made with
// one that was set). It logs in through api (the stack's gateway) to
// know; "" when all is well.
func checkKeptAdmin(api http.Handler, username, password, passwordFile string) string {
	if password == "" {
		if _, err := os.Stat(passwordFile); err == nil {
			return ""
		}
		return fmt.Sprintf("warning: the kept admin's password was set with SCANGATE_ADMIN_PASSWORD (%s is absent): set it again, or start empty with make run FRESH=1", passwordFile)
	}
	body, err := json.Marshal(map[string]string{"username": username, "password": password})
	if err != nil {
		return ""
	}
	req := httptest.NewRequest(http.MethodPost, "/api/auth/token", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code == http.StatusOK {
		return ""
	}
	return fmt.Sprintf("warning: SCANGATE_ADMIN_PASSWORD is not the kept admin's password (logging in with it answered %d): "+
		"the admin keeps the one it was made with; start empty with make run FRESH=1 to make it with this one", rec.Code)
}
