package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"gopkg.in/yaml.v3"

	scangateapi "github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/ddbtest"
	"github.com/scangate/scangate/pkg/local"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

// iamActions maps a DynamoDB call to the IAM actions it needs, each with
// the resource it acts on ("table", or "index/GSI1" for a query of the
// index); a transaction needs the action of each of its items.
func iamActions(op string, input any) []string {
	if q, ok := input.(*dynamodb.QueryInput); ok && q.IndexName != nil {
		return []string{"dynamodb:Query@index/" + *q.IndexName}
	}
	if tx, ok := input.(*dynamodb.TransactWriteItemsInput); ok {
		var acts []string
		for _, it := range tx.TransactItems {
			switch {
			case it.Put != nil:
				acts = append(acts, "dynamodb:PutItem")
			case it.Update != nil:
				acts = append(acts, "dynamodb:UpdateItem")
			case it.Delete != nil:
				acts = append(acts, "dynamodb:DeleteItem")
			case it.ConditionCheck != nil:
				acts = append(acts, "dynamodb:ConditionCheckItem")
			}
		}
		return acts
	}
	return []string{"dynamodb:" + op}
}

// resourceOf names the resource of a policy statement as iamActions does;
// an S3 resource is "uploads/*" when it is the uploads prefix of the
// uploads bucket.
func resourceOf(n yaml.Node) string {
	v := n.Value
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 { // !Sub [template, vars]
		v = n.Content[0].Value
	}
	if strings.Contains(v, ":s3:::") {
		if strings.HasSuffix(v, ":s3:::scangate-uploads-${StackUuid}/uploads/*") {
			return "uploads/*"
		}
		return "bucket " + v
	}
	if _, index, ok := strings.Cut(n.Value, "/index/"); ok {
		return "index/" + strings.TrimSuffix(index, `"`)
	}
	return "table"
}

// templatePolicies reads each function's allowed DynamoDB actions from
// template.yaml.
func templatePolicies(t *testing.T) map[string][]string {
	b, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Policies []struct {
					Statement []struct {
						Effect   string    `yaml:"Effect"`
						Action   []string  `yaml:"Action"`
						Resource yaml.Node `yaml:"Resource"`
					} `yaml:"Statement"`
				} `yaml:"Policies"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for id, r := range doc.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		out[id] = []string{}
		for _, p := range r.Properties.Policies {
			for _, st := range p.Statement {
				if st.Effect != "Allow" {
					continue
				}
				for _, a := range st.Action {
					if res := resourceOf(st.Resource); res != "table" {
						a += "@" + res
					}
					out[id] = append(out[id], a)
				}
			}
		}
	}
	return out
}

// TestIAMPolicies runs every function through a workflow that takes each
// of its paths, records the DynamoDB actions each one uses, and checks them
// against the function's policy in template.yaml: nothing it uses is
// missing, nothing it does not use is granted.
func TestIAMPolicies(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var mu sync.Mutex
	used := map[string]map[string]bool{}
	stack, err := local.Start(context.Background(), local.Options{
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		S3OptionsFor: func(fn string) []func(*s3.Options) {
			return []func(*s3.Options){func(o *s3.Options) {
				o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
					return st.Initialize.Add(middleware.InitializeMiddlewareFunc("record",
						func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
							mu.Lock()
							if used[fn] == nil {
								used[fn] = map[string]bool{}
							}
							// A presigned PUT acts with the permissions of
							// the function that signed it.
							used[fn]["s3:"+middleware.GetOperationName(ctx)+"@uploads/*"] = true
							mu.Unlock()
							return next.HandleInitialize(ctx, in)
						}), middleware.After)
				})
			}}
		},
		StoreFor: func(fn string) *store.Store {
			return env.Recorder(t, func(op string, input any) {
				mu.Lock()
				defer mu.Unlock()
				if used[fn] == nil {
					used[fn] = map[string]bool{}
				}
				for _, a := range iamActions(op, input) {
					used[fn][a] = true
				}
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	admin := loginToken(t, api, "admin", "admin-password-1")
	steps := []struct{ method, path, body string }{
		{"POST", "/auth/token", `{"username":"admin","password":"wrong-password-1"}`},
		{"POST", "/users", `{"username":"wendy","user_email":"wendy@example.com","password":"password-123","role":"user"}`},
		{"PUT", "/users/2", `{"role":"admin","active":true,"user_email":"wendy2@example.com"}`},
		{"PUT", "/users/2", `{"role":"user","active":true,"user_email":"wendy2@example.com"}`},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		{"GET", "/pr/scan/1", ""},
		{"POST", "/auth/tokens", `{"name":"ci","scope":"read"}`},
		{"DELETE", "/auth/tokens/{id}", ""}, // the token created just before
		{"POST", "/whitelist", `{"type":"SECRET","name":"sha256:aa","global_":true,"comment":"c"}`},
		{"PUT", "/whitelist/1", `{"name":"sha256:bb","comment":"moved"}`},
		{"PUT", "/whitelist/1", `{"name":"sha256:aa"}`},
		// A recording whose findings' group has rules reads them.
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		// A SARIF upload whose secret's group has rules (sha256 of "v").
		{"POST", "/whitelist", `{"type":"SECRET","name":"sha256:4c94485e0c21ae6c41ce1dfe7b6bfaceea5ab68e40a2476f50208e526f506080","global_":true}`},
		{"POST", "/pr/scan/sarif", `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},` +
			`"sarif":{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[{"ruleId":"k","message":{"text":"m"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":1,"snippet":{"text":"v"}}}}]}]}]}}`},
		{"DELETE", "/auth/token", ""}, // last: it revokes the token of these steps
	}
	lastID := ""
	for _, s := range steps {
		path := strings.ReplaceAll(s.path, "{id}", lastID)
		resp, body := do(t, s.method, api+path, admin, s.body)
		if resp.StatusCode >= 400 && s.method != "POST" || resp.StatusCode >= 500 {
			t.Fatalf("%s %s: %d %s", s.method, path, resp.StatusCode, body)
		}
		if m := regexp.MustCompile(`^\{"id":(\d+)`).FindStringSubmatch(body); m != nil {
			lastID = m[1]
		}
	}
	// The scheduled function, on an allowlist whose expiry has passed (put
	// straight into the store: the API takes future expiries only).
	past := scangate.At(time.Now().Add(-time.Minute))
	if _, _, err := env.Store.CreateAllowlist(context.Background(), scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret,
		Name: "sha256:aa", Active: true, Global: true}, ExpiresAt: &past}, "", scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if out, err := stack.Invoke(context.Background(), "ExpireAllowlistsFunction", []byte(`{"source":"aws.events","detail-type":"Scheduled Event"}`)); err != nil {
		t.Fatalf("the scheduled function: %s %v", out, err)
	}
	// Actions a function needs only when it races another request, which
	// this sequential workflow does not provoke.
	racing := map[string][]string{
		// a scan that is not its PR's newest checks the PR is unchanged; a
		// group changed while the scan was recorded is settled under a check.
		"RecordScanFunction":        {"dynamodb:ConditionCheckItem"},
		"RecordSarifFunction":       {"dynamodb:ConditionCheckItem"},
		"IngestSarifUploadFunction": {"dynamodb:ConditionCheckItem"},
	}
	for fn, acts := range racing {
		for _, a := range acts {
			if used[fn] == nil {
				used[fn] = map[string]bool{}
			}
			used[fn][a] = true
		}
	}
	// A large upload: created, PUT to its presigned URL, ingested; one of
	// its findings' groups has rules. (The steps above logged out.)
	admin = loginToken(t, api, "admin", "admin-password-1")
	if resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"VULNERABILITY","name":"CVE-2099-10000","global_":true}`); resp.StatusCode != 201 {
		t.Fatalf("allowlist: %d %s", resp.StatusCode, body)
	}
	resp, body := do(t, "POST", api+"/pr/scan/sarif/uploads", admin, `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"r",`+
		`"webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"}}`)
	var up struct {
		ID            int64             `json:"id"`
		UploadURL     string            `json:"upload_url"`
		UploadHeaders map[string]string `json:"upload_headers"`
	}
	if err := json.Unmarshal([]byte(body), &up); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create upload: %d %s", resp.StatusCode, body)
	}
	if code, b := put(t, up.UploadURL, up.UploadHeaders, gz(t, sarifLog(2, 2, "iam"))); code != 200 {
		t.Fatalf("PUT: %d %s", code, b)
	}
	for i := 0; ; i++ {
		_, b := do(t, "GET", fmt.Sprintf("%s/pr/scan/sarif/uploads/%d", api, up.ID), admin, "")
		if strings.Contains(b, `"status":"complete"`) {
			break
		}
		if i == 600 {
			t.Fatalf("the upload did not complete: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	policies := templatePolicies(t)
	reads := []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Query@index/GSI1"}
	for fn, allowed := range policies {
		var got []string
		for a := range used[fn] {
			got = append(got, a)
		}
		sort.Strings(got)
		want := slices.Clone(allowed)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the policy grants %v; the code uses %v", fn, want, got)
		}
		for _, a := range allowed {
			if action, _, _ := strings.Cut(a, "@"); strings.Contains(action, "*") || a == "dynamodb:Scan" {
				t.Errorf("%s: the policy grants %s", fn, a)
			}
		}
		if fn == "GetScanFunction" {
			for _, a := range allowed {
				if !slices.Contains(reads, a) {
					t.Errorf("%s reads only, but may %s", fn, a)
				}
			}
		}
	}
	// Every function of the operations table was checked, and each one
	// called DynamoDB in the workflow above.
	if ops := scangateapi.Operations(); len(policies) != len(ops) || len(used) != len(ops) {
		t.Errorf("%d functions in the template and %d that ran, of %d operations: %v", len(policies), len(used), len(ops), fmt.Sprint(policies))
	}
}
