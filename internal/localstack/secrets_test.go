package localstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
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
	stack, err := localstack.Start(context.Background(), localstack.Options{
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
	do(t, "POST", api+"/whitelist", xavier, `{"type":"SECRET","name":"sha256:5f2b9c0e8d1a","global_":true,"reason":"used_in_tests"}`)
	_, body := do(t, "POST", api+"/auth/tokens", xavier, `{"name":"ci","scope":"read"}`)
	personal := regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(body)[1]
	do(t, "GET", api+"/pr/scan/1", personal, "")
	do(t, "DELETE", api+"/auth/token", personal, "")
	const planted = "planted-Secret-Value-4"
	do(t, "POST", api+"/pr/scan/sarif", xavier, `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":1,"repo_name":"o/r","webhook_id":1,`+
		`"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"},"sarif":{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[`+
		`{"ruleId":"k","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":1,"snippet":{"text":"`+planted+`"}}}}]}]}]}}`)
	do(t, "PUT", api+"/users/2", admin, `{"role":"user","active":false,"user_email":"xavier@example.com"}`)
	do(t, "GET", api+"/pr/scan/1", xavier, "")
	secrets = append(secrets, admin, xavier, personal, planted)

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
	// Nor does any audit entry or log line hold a hash of them: the
	// tokens' (the keys of their records) or the passwords' (kept on the
	// username markers).
	var hashes []string
	var audit []map[string]any
	for _, it := range out.Items {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		switch {
		case strings.HasPrefix(pk, "TOKEN#"):
			hashes = append(hashes, strings.TrimPrefix(pk, "TOKEN#"))
		case strings.HasPrefix(pk, "USERNAME#"):
			hashes = append(hashes, it["pw_hash"].(*types.AttributeValueMemberS).Value)
		case strings.HasPrefix(pk, "AUDIT"):
			var e map[string]any
			_ = attributevalueJSON(it, &e)
			audit = append(audit, e)
		}
	}
	entries, _ := json.Marshal(audit)
	if len(hashes) < 5 || len(audit) < 8 {
		t.Fatalf("%d hashes and %d audit entries: the workflow did not run", len(hashes), len(audit))
	}
	for _, h := range hashes {
		if strings.Contains(string(entries), h) || strings.Contains(logs.String(), h) {
			t.Errorf("an audit entry or log line holds the hash %q", h[:12]+"...")
		}
	}
}

// attributevalueJSON turns an item into plain JSON, for searching.
func attributevalueJSON(it map[string]types.AttributeValue, v any) error {
	m := map[string]string{}
	for k, a := range it {
		b, _ := json.Marshal(a)
		m[k] = string(b)
	}
	b, _ := json.Marshal(m)
	return json.Unmarshal(b, v)
}
