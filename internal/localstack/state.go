package localstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
)

// The embedded server keeps its tables in memory; make run saves a table
// to a file when it stops and loads it back when it starts, so that what
// a session made (users, tokens, scans, allowlists, webhooks) survives a
// restart. The file holds the items as the DynamoDB API carries them (its
// JSON wire form, which the embedded server reads and writes), so that
// nothing is converted on the way: a Scan of the whole table (the embedded
// server answers it in one page, under its lock: a consistent copy) and
// BatchWriteItem requests of 25 to load it.

// state is the file's content.
type state struct {
	Table string            `json:"table"`
	Items []json.RawMessage `json:"items"`
}

// SaveTable writes every item of table to path (mode 0600: it holds
// password and token hashes and sealed secrets), replacing the file at
// once (written beside it, then renamed), and gives how many items.
func (e *Embedded) SaveTable(ctx context.Context, table, path string) (int, error) {
	st := state{Table: table, Items: []json.RawMessage{}}
	var start json.RawMessage
	for {
		in := map[string]any{"TableName": table}
		if start != nil {
			in["ExclusiveStartKey"] = start
		}
		var out struct {
			Items            []json.RawMessage `json:"Items"`
			LastEvaluatedKey json.RawMessage   `json:"LastEvaluatedKey"`
		}
		if err := e.call(ctx, "Scan", in, &out); err != nil {
			return 0, fmt.Errorf("save %s: %w", path, err)
		}
		st.Items = append(st.Items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 || string(out.LastEvaluatedKey) == "null" || string(out.LastEvaluatedKey) == "{}" {
			break
		}
		start = out.LastEvaluatedKey
	}
	b, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, fmt.Errorf("save %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return 0, fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, fmt.Errorf("save %s: %w", path, err)
	}
	return len(st.Items), nil
}

// LoadTable puts the items saved in path into table (which must exist, and
// is expected empty) and gives how many; a missing file is fs.ErrNotExist.
func (e *Embedded) LoadTable(ctx context.Context, table, path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", path, err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return 0, fmt.Errorf("load %s: not a saved table: %w", path, err)
	}
	if st.Table != table {
		return 0, fmt.Errorf("load %s: it holds table %q, not %q", path, st.Table, table)
	}
	for i := 0; i < len(st.Items); i += 25 {
		var puts []map[string]any
		for _, item := range st.Items[i:min(i+25, len(st.Items))] {
			puts = append(puts, map[string]any{"PutRequest": map[string]json.RawMessage{"Item": item}})
		}
		for len(puts) > 0 {
			var out struct {
				UnprocessedItems map[string][]map[string]any `json:"UnprocessedItems"`
			}
			if err := e.call(ctx, "BatchWriteItem", map[string]any{"RequestItems": map[string]any{table: puts}}, &out); err != nil {
				return 0, fmt.Errorf("load %s: %w", path, err)
			}
			puts = out.UnprocessedItems[table]
		}
	}
	return len(st.Items), nil
}

// call sends one request of the DynamoDB API to the embedded server.
func (e *Embedded) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", op, resp.StatusCode, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}

// IsNoState tells an error of LoadTable that only says there is no file.
func IsNoState(err error) bool { return errors.Is(err, fs.ErrNotExist) }
