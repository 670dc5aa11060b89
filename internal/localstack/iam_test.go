package localstack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	"github.com/go-jose/go-jose/v4"
	"gopkg.in/yaml.v3"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/oidctest"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
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
	if _, ok := input.(*dynamodb.TransactGetItemsInput); ok { // authorized as the GetItem of each item
		return []string{"dynamodb:GetItem"}
	}
	return []string{"dynamodb:" + op}
}

// resourcesOf names the resources of a policy statement: one, or each of
// a list.
func resourcesOf(n yaml.Node) []string {
	if n.Kind != yaml.SequenceNode || n.Tag == "!Sub" {
		return []string{resourceOf(n)}
	}
	var out []string
	for _, e := range n.Content {
		out = append(out, resourceOf(*e))
	}
	return out
}

// s3Action names an S3 call as a policy grants it: its IAM action (the
// parts of a multipart upload are s3:PutObject) on the prefix of its key
// in the uploads bucket.
func s3Action(op string, params any) string {
	var key *string
	switch in := params.(type) {
	case *s3.PutObjectInput:
		key = in.Key
	case *s3.GetObjectInput:
		key = in.Key
	case *s3.DeleteObjectInput:
		key = in.Key
	case *s3.CreateMultipartUploadInput:
		key, op = in.Key, "PutObject"
	case *s3.UploadPartInput:
		key, op = in.Key, "PutObject"
	case *s3.CompleteMultipartUploadInput:
		key, op = in.Key, "PutObject"
	}
	prefix, _, _ := strings.Cut(aws.ToString(key), "/")
	return "s3:" + op + "@" + prefix + "/*"
}

// resourceOf names the resource of a policy statement as iamActions does;
// an S3 resource is "uploads/*" when it is the uploads prefix of the
// uploads bucket; another resource than the table (a queue, the event
// bus) is named by its logical id.
func resourceOf(n yaml.Node) string {
	if id, _, _ := strings.Cut(n.Value, "."); n.Tag == "!GetAtt" && id != "Table" {
		return id
	}
	if n.Tag == "!Ref" { // a secret: its ARN
		return n.Value
	}
	v := n.Value
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 { // !Sub [template, vars]
		v = n.Content[0].Value
	}
	if strings.Contains(v, ":s3:::") {
		for _, prefix := range []string{"uploads/*", "sarif/*"} {
			if strings.HasSuffix(v, ":s3:::scangate-uploads-${StackUuid}/"+prefix) {
				return prefix
			}
		}
		return "bucket " + v
	}
	if _, index, ok := strings.Cut(n.Value, "/index/"); ok {
		return "index/" + strings.TrimSuffix(index, `"`)
	}
	return "table"
}

// statement is one Allow statement of a function's policy: its actions
// (with their resource, as iamActions names them) and, when it has a
// ForAllValues:StringLike condition on dynamodb:LeadingKeys, its patterns.
type statement struct {
	actions     []string
	leadingKeys []string
}

// templateStatements reads each function's Allow statements on DynamoDB
// from template.yaml.
func templateStatements(t *testing.T) map[string][]statement {
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
						Effect    string                         `yaml:"Effect"`
						Action    []string                       `yaml:"Action"`
						Resource  yaml.Node                      `yaml:"Resource"`
						Condition map[string]map[string][]string `yaml:"Condition"`
					} `yaml:"Statement"`
				} `yaml:"Policies"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]statement{}
	for id, r := range doc.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		out[id] = []statement{}
		for _, p := range r.Properties.Policies {
			for _, st := range p.Statement {
				if st.Effect != "Allow" {
					continue
				}
				var s statement
				for _, a := range st.Action {
					for _, res := range resourcesOf(st.Resource) {
						if res != "table" {
							s.actions = append(s.actions, a+"@"+res)
						} else {
							s.actions = append(s.actions, a)
						}
					}
				}
				for op, keys := range st.Condition {
					if op != "ForAllValues:StringLike" {
						t.Errorf("%s: condition %s; the test reads ForAllValues:StringLike only", id, op)
					}
					s.leadingKeys = append(s.leadingKeys, keys["dynamodb:LeadingKeys"]...)
				}
				out[id] = append(out[id], s)
			}
		}
	}
	return out
}

// templatePolicies reads each function's allowed DynamoDB actions from
// template.yaml.
func templatePolicies(t *testing.T) map[string][]string {
	out := map[string][]string{}
	for id, sts := range templateStatements(t) {
		out[id] = []string{}
		for _, st := range sts {
			for _, a := range st.actions { // an action may be granted on different keys by two statements
				if !slices.Contains(out[id], a) {
					out[id] = append(out[id], a)
				}
			}
		}
	}
	return out
}

// leadingKeys returns the partition keys a DynamoDB call reads or writes,
// each with the action (and resource) it needs: a query's partition (of
// the index it queries), the keys of reads and writes.
func leadingKeys(op string, input any) [][2]string {
	var out [][2]string
	add := func(action string, k map[string]types.AttributeValue) {
		if v, ok := k["PK"].(*types.AttributeValueMemberS); ok {
			out = append(out, [2]string{action, v.Value})
		}
	}
	switch in := input.(type) {
	case *dynamodb.QueryInput:
		// The partition is the value the key condition's first equality names.
		_, rest, _ := strings.Cut(aws.ToString(in.KeyConditionExpression), "= ")
		name, _, _ := strings.Cut(rest, " ")
		if v, ok := in.ExpressionAttributeValues[name].(*types.AttributeValueMemberS); ok {
			out = append(out, [2]string{iamActions(op, input)[0], v.Value})
		}
	case *dynamodb.GetItemInput:
		add("dynamodb:GetItem", in.Key)
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			add("dynamodb:GetItem", it.Get.Key)
		}
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				add("dynamodb:BatchGetItem", k)
			}
		}
	case *dynamodb.PutItemInput:
		add("dynamodb:PutItem", in.Item)
	case *dynamodb.UpdateItemInput:
		add("dynamodb:UpdateItem", in.Key)
	case *dynamodb.DeleteItemInput:
		add("dynamodb:DeleteItem", in.Key)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				if r.PutRequest != nil {
					add("dynamodb:BatchWriteItem", r.PutRequest.Item)
				} else if r.DeleteRequest != nil {
					add("dynamodb:BatchWriteItem", r.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				add("dynamodb:PutItem", it.Put.Item)
			case it.Update != nil:
				add("dynamodb:UpdateItem", it.Update.Key)
			case it.Delete != nil:
				add("dynamodb:DeleteItem", it.Delete.Key)
			case it.ConditionCheck != nil:
				add("dynamodb:ConditionCheckItem", it.ConditionCheck.Key)
			}
		}
	}
	return out
}

// allows reports whether a function's statements allow an action on a
// partition key: some statement grants the action, with no LeadingKeys
// condition or with a pattern the key matches (IAM's StringLike).
func allows(sts []statement, action, key string) bool {
	for _, st := range sts {
		if !slices.Contains(st.actions, action) {
			continue
		}
		if len(st.leadingKeys) == 0 {
			return true
		}
		for _, p := range st.leadingKeys {
			if like(p, key) {
				return true
			}
		}
	}
	return false
}

// pathParam is a parameter of a route's path: {pr_scan_id}.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// like matches IAM's StringLike: * is any run of characters, ? one.
func like(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if like(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && like(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && like(pattern[1:], s[1:])
}

// TestIAMPolicies runs every function through a workflow that takes each
// of its paths, records the DynamoDB actions each one uses (and its calls
// to the queues, the bus and Secrets Manager for its keys), and checks
// them against the function's policy in template.yaml: nothing it uses is
// missing, nothing it does not use is granted. So exactly the functions
// that seal, open or page read exactly their key's secret.
func TestIAMPolicies(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	var mu sync.Mutex
	used := map[string]map[string]bool{}
	keys := map[string]map[[2]string]bool{} // function: (action, partition key) it used
	clock := &aheadClock{}
	provider, sso := startSSOProvider(t) // single sign-on's function runs too
	stack, err := localstack.Start(context.Background(), localstack.Options{
		SSO:      sso,
		Template: "../../template.yaml", Table: env.Table, Client: env.DB, AdminUsername: "admin", AdminPassword: "admin-password-1",
		AuthorizerTTL: 0, TokenTTL: clockedTokenTTL, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: clock.Now,
		SARIFInlineMax: 1, // every SARIF log through the bucket
		Observe: func(fn, action string) {
			mu.Lock()
			defer mu.Unlock()
			if used[fn] == nil {
				used[fn] = map[string]bool{}
			}
			used[fn][action] = true
		},
		S3OptionsFor: func(fn string) []func(*s3.Options) {
			return []func(*s3.Options){func(o *s3.Options) {
				o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
					return st.Initialize.Add(middleware.InitializeMiddlewareFunc("record",
						func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
							mu.Lock()
							if used[fn] == nil {
								used[fn] = map[string]bool{}
							}
							// A presigned PUT or GET acts with the
							// permissions of the function that signed it.
							used[fn][s3Action(middleware.GetOperationName(ctx), in.Parameters)] = true
							mu.Unlock()
							return next.HandleInitialize(ctx, in)
						}), middleware.After)
				})
			}}
		},
		StoreFor: func(fn string, stream func(*dynamodb.Options)) *store.Store {
			return env.RecorderWith(t, func(op string, input any) {
				mu.Lock()
				defer mu.Unlock()
				if used[fn] == nil {
					used[fn] = map[string]bool{}
				}
				for _, a := range iamActions(op, input) {
					used[fn][a] = true
				}
				if keys[fn] == nil {
					keys[fn] = map[[2]string]bool{}
				}
				for _, k := range leadingKeys(op, input) {
					keys[fn][k] = true
				}
			}, []store.Option{store.WithReevaluation(1, 1)}, stream) // a re-evaluation of more than one finding is dispatched to the work queue
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(stack.Handler)
	defer srv.Close()
	api := srv.URL + "/api"
	admin := loginToken(t, api, "admin", "admin-password-1")
	// Single sign-on: a person's first sign-in (a user created) and a
	// refusal (audited).
	for login, want := range map[string]int{"alice": http.StatusOK, "mallory": http.StatusForbidden} {
		if status, body := ssoSignIn(t, provider, api, login); status != want {
			t.Fatalf("single sign-on of %s: %d %s", login, status, body)
		}
	}
	// A receiver of webhooks that fails the first two attempts of each
	// delivery to /hook (so a delivery moves to the retry queue, then waits
	// hidden there) and answers 410 at /gone, and a stand-in of GitHub's
	// statuses.
	var hookMu sync.Mutex
	attempts := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		attempts[r.Header.Get("webhook-id")]++
		n := attempts[r.Header.Get("webhook-id")]
		hookMu.Unlock()
		switch {
		case r.URL.Path == "/gone":
			w.WriteHeader(http.StatusGone)
		case n <= 2:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer recv.Close()
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1}`)) // a note's id, for GitLab's notes
	}))
	defer gh.Close()
	// A CI's issuer on loopback, and an id token of it for the trust
	// "ci" below.
	issuer := oidctest.New(t)
	ciKey := oidctest.RSAKey(t, "k1")
	issuer.Publish(ciKey)
	idToken := oidctest.Sign(t, ciKey, jose.RS256, oidctest.GitHubClaims(issuer.URL, "a", "2", clock.Now()))
	steps := []struct{ method, path, body string }{
		// Events: an integration, a subscription changed, rotated, tested
		// and redelivered (its event's deliveries run in the background), and
		// one whose receiver answers 410 (disabled by the deliverer).
		{"PUT", "/integrations/1", `{"type":"github","api_url":"` + gh.URL + `","token":"ghp_iam"}`},
		{"PUT", "/integrations/1", `{"type":"github","api_url":"` + gh.URL + `"}`}, // the token kept
		{"PUT", "/integrations/2", `{"type":"gitlab","token":"glpat_iam"}`},
		{"DELETE", "/integrations/2", ""},
		// Trusted CI: a trust put, replaced and another deleted (named 1
		// for the GET below).
		{"PUT", "/auth/oidc/trust/1", `{"issuer":"https://token.actions.githubusercontent.com","audience":"a","repos":[{"vc_id":1,"repo_id":2}]}`},
		{"PUT", "/auth/oidc/trust/1", `{"issuer":"https://token.actions.githubusercontent.com","audience":"a","repos":[{"vc_id":1,"repo_id":2}],"conditions":{"ref":"refs/heads/*"}}`},
		{"PUT", "/auth/oidc/trust/2", `{"issuer":"https://gitlab.com","audience":"a","repos":[{"vc_id":1,"repo_id":2}]}`},
		{"DELETE", "/auth/oidc/trust/2", ""},
		// An id token exchanged, and one refused (audited).
		{"PUT", "/auth/oidc/trust/ci", `{"issuer":"` + issuer.URL + `","audience":"a","repos":[{"vc_id":1,"repo_id":2}]}`},
		{"POST", "/auth/oidc/token", `{"id_token":"` + idToken + `"}`},
		{"POST", "/auth/oidc/token", `{"id_token":"` + idToken + `x"}`},
		{"POST", "/webhooks", `{"url":"` + recv.URL + `/hook","events":["allowlist.created","allowlist.updated","upload.completed"]}`},
		{"PATCH", "/webhooks/1", `{"description":"iam"}`},
		{"POST", "/webhooks/1/rotate-secret", ""},
		{"POST", "/webhooks/1/test", ""},
		{"DRAIN", "", ""}, // the test's delivery reaches its end
		{"POST", "/webhooks/1/deliveries/{event}/redeliver", ""},
		{"POST", "/webhooks", `{"url":"` + recv.URL + `/gone","events":["webhook.test"]}`},
		{"POST", "/webhooks/2/test", ""},
		{"POST", "/auth/token", `{"username":"admin","password":"wrong-password-1"}`},
		{"POST", "/users", `{"username":"wendy","user_email":"wendy@example.com","password":"password-123","role":"user"}`},
		{"PUT", "/users/2", `{"role":"admin","active":true,"user_email":"wendy2@example.com"}`},
		{"PUT", "/users/2", `{"role":"user","active":true,"user_email":"wendy2@example.com"}`},
		{"PUT", "/users/2", `{"role":"user","active":false,"user_email":"wendy2@example.com"}`}, // the username marker's state
		{"PUT", "/users/2", `{"role":"user","active":true,"user_email":"wendy2@example.com"}`},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		{"POST", "/auth/tokens", `{"name":"ci","scope":"read"}`},
		{"DELETE", "/auth/tokens/{id}", ""}, // the token created just before
		{"GET", "/audit?action=login.failure", ""},
		{"GET", "/audit?limit=2", ""}, // both partitions, merged
		{"GET", "/audit?target_type=user&target_id=2", ""},
		{"GET", "/audit?actor_id=1", ""},
		{"POST", "/whitelist", `{"type":"SECRET","name":"sha256:aa","global_":true,"reason":"used_in_tests","comment":"c"}`},
		{"PUT", "/whitelist/1", `{"name":"sha256:bb","comment":"moved"}`},
		{"PUT", "/whitelist/1", `{"name":"sha256:aa"}`},
		// A recording whose findings' group has rules reads them.
		{"POST", "/pr/scan", `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:aa"}]}`},
		// A GitLab integration's gate change: its status, and its merge
		// request's note, which reads the gate's blocking findings.
		{"PUT", "/integrations/3", `{"type":"gitlab","api_url":"` + gh.URL + `/api/v4","token":"glpat_iam"}`},
		{"POST", "/pr/scan", `{"scan_type":"SECRET","status":"completed","vc_type":"gitlab","vc_id":3,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":9,"pr_name":"n","pr_link":"l"},` +
			`"commit_sha":"` + strings.Repeat("a", 40) + `","findings":[{"name":"sha256:cc","path":"a.go","line":3}]}`},
		{"DRAIN", "", ""},
		// The read side: each listing's first page and a page from a
		// cursor (followed below), and each way a read finds its keys.
		{"GET", "/pr/scan/1/findings?suppressed=true", ""},
		{"GET", "/pr/1/scans?limit=1", ""},
		{"GET", "/pr/1/scans?scan_type=VULNERABILITY", ""}, // no scan on the page: the PR's id item
		{"GET", "/pr?limit=1", ""},
		{"GET", "/pr?vc_id=1&repo_id=2&blocked=true", ""},
		{"GET", "/pr?vc_id=1&repo_id=2&number=4", ""}, // one PR by its number
		{"GET", "/whitelist?limit=1&type=SECRET", ""},
		{"GET", "/whitelist?name=SHA256:AA", ""},
		{"GET", "/users?limit=1&role=admin", ""},
		// A SARIF upload whose secret's group has rules (sha256 of "v").
		{"POST", "/whitelist", `{"type":"SECRET","name":"sha256:4c94485e0c21ae6c41ce1dfe7b6bfaceea5ab68e40a2476f50208e526f506080","global_":true,"reason":"revoked"}`},
		{"POST", "/pr/scan/sarif", `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},` +
			`"sarif":{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[{"ruleId":"k","message":{"text":"m"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":1,"snippet":{"text":"v"}}}}]}]}]}}`},
		// A SARIF upload that opens a PR (its id item).
		{"POST", "/pr/scan/sarif", `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,"pr":{"pr_id":5,"pr_name":"n","pr_link":"l"},` +
			`"sarif":{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[{"ruleId":"k","message":{"text":"m"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"b"},"region":{"startLine":2,"snippet":{"text":"w"}}}}]}]}]}}`},
		// Policy changes: each re-judges every PR's gate (the newest scans' block status too).
		{"PUT", "/gate/policy", `{"block_severity":{"SECRET":"critical"}}`},
		{"PUT", "/gate/policy/repos/2", `{"required":[{"scan_type":"VULNERABILITY","category":"semgrep"}]}`},
		{"DELETE", "/gate/policy/repos/2", ""},
		{"PUT", "/gate/policy", `{}`},
		{"DELETE", "/auth/token", ""}, // last: it revokes the token of these steps
	}
	lastID, event := "", ""
	for _, s := range steps {
		if s.method == "DRAIN" {
			drain(t, stack, clock)
			continue
		}
		path := strings.ReplaceAll(strings.ReplaceAll(s.path, "{id}", lastID), "{event}", event)
		resp, body := do(t, s.method, api+path, admin, s.body)
		if resp.StatusCode >= 400 && s.method != "POST" || resp.StatusCode >= 500 {
			t.Fatalf("%s %s: %d %s", s.method, path, resp.StatusCode, body)
		}
		if m := regexp.MustCompile(`^\{"id":(\d+)`).FindStringSubmatch(body); m != nil {
			lastID = m[1]
		}
		if m := regexp.MustCompile(`"event_id":"([0-9A-Z]{26})"`).FindStringSubmatch(body); m != nil {
			event = m[1]
		}
		if link := resp.Header.Get("Link"); link != "" { // the next page, from its cursor
			next := strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			if resp, body := do(t, "GET", srv.URL+next, admin, ""); resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %s", next, resp.StatusCode, body)
			}
		}
	}
	// The scheduled function, on an allowlist whose expiry has passed (put
	// straight into the store: the API takes future expiries only).
	past := scangate.At(time.Now().Add(-time.Minute))
	if _, _, err := env.Store.CreateAllowlist(context.Background(), scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret,
		Name: "sha256:aa", Active: true, Global: true}, ExpiresAt: &past}, "", scangate.Who{RequestID: "test"}, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if out, err := stack.Invoke(context.Background(), "ExpireAllowlistsFunction", []byte(`{"source":"aws.events","detail-type":"Scheduled Event"}`)); err != nil {
		t.Fatalf("the scheduled function: %s %v", out, err)
	}
	// Actions a function needs only when it races another request, which
	// this sequential workflow does not provoke.
	racing := map[string][]string{
		// a re-evaluation read while it runs adds its steps done, which
		// this workflow reads once complete.
		"GetReevaluationFunction": {"dynamodb:Query"},
		// a stream record dispatched twice finds its delivery created.
		"DispatchEventsFunction": {"dynamodb:GetItem"},
		// a delivery whose attempts ran out is dead-lettered.
		"DeliverEventsFunction": {"sqs:SendMessage@DeliveryDeadLetterQueue"},
	}
	mu.Lock() // the expiry's work may still run on the stack's queue
	for fn, acts := range racing {
		for _, a := range acts {
			if used[fn] == nil {
				used[fn] = map[string]bool{}
			}
			used[fn][a] = true
		}
	}
	mu.Unlock()
	// A large upload: created, PUT to its presigned URL, ingested; one of
	// its findings' groups has rules. (The steps above logged out.)
	admin = loginToken(t, api, "admin", "admin-password-1")
	if resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"VULNERABILITY","name":"CVE-2099-10000","global_":true,"reason":"wont_fix"}`); resp.StatusCode != 201 {
		t.Fatalf("allowlist: %d %s", resp.StatusCode, body)
	}
	resp, body := do(t, "POST", api+"/pr/scan/sarif/uploads", admin, `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r",`+
		`"webhook_id":3,"pr":{"pr_id":6,"pr_name":"n","pr_link":"l"}}`) // a new PR: its id item
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
	// The work dispatched to the queue is done.
	if err := stack.Queue("WorkQueue").Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A gate change with a commit: its status is posted to the integration.
	gate := `{"pr_id":1,"vc_id":1,"repo_id":2,"repo_name":"acme/api","head_sha":"` + strings.Repeat("a", 40) + `","sequence":1,"blocked":true,` +
		`"reasons":[{"kind":"findings","scan_type":"SECRET","category":"default","count":1}],"categories":[]}`
	if _, err := stack.Store.RecordEvent(context.Background(), scangate.Event{Type: scangate.EventGateChanged,
		OccurredAt: scangate.At(time.Now()), Data: []byte(gate)}); err != nil {
		t.Fatal(err)
	}
	drain(t, stack, clock)
	resp, body = do(t, "DELETE", api+"/webhooks/2", admin, "")
	if resp.StatusCode != 204 {
		t.Fatalf("DELETE /webhooks/2: %d %s", resp.StatusCode, body)
	}
	// A branch analysis: branch 1 of repository 2.
	if resp, body := do(t, "POST", api+"/pr/scan", admin, `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,`+
		`"repo_name":"o/r","webhook_id":3,"branch":"main","findings":[{"name":"sha256:ab"}]}`); resp.StatusCode != 201 {
		t.Fatalf("branch analysis: %d %s", resp.StatusCode, body)
	}
	// Every GET route, with each path id 1 (which every kind of record has
	// by now), and the queries a route requires, so that every reading
	// function runs; the branches' listing also by name.
	queries := map[string][]string{"/api/branches": {"?vc_id=1&repo_id=2", "?vc_id=1&repo_id=2&name=main"}}
	tpl, err := gateway.ReadTemplate("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tpl.Routes {
		if r.Method == "GET" {
			qs, ok := queries[r.Path]
			if !ok {
				qs = []string{""}
			}
			for _, q := range qs {
				path := api + strings.TrimPrefix(pathParam.ReplaceAllString(r.Path, "1"), "/api") + q
				if resp, body := do(t, "GET", path, admin, ""); resp.StatusCode != 200 {
					t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
				}
			}
		}
	}
	// The same with a token scoped to the repository of those records:
	// its checks read nothing the functions' policies do not grant.
	resp, body = do(t, "POST", api+"/auth/tokens", admin, `{"name":"scoped","scope":"scan","repos":[{"vc_id":1,"repo_id":2}]}`)
	var scopedTok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(body), &scopedTok); err != nil || resp.StatusCode != 201 {
		t.Fatalf("a scoped token: %d %s", resp.StatusCode, body)
	}
	scopedReads := map[string]bool{"GetScanFunction": true, "ListFindingsFunction": true, "GetPrFunction": true, "ListPrScansFunction": true,
		"ListPrsFunction": true, "GetPrGateFunction": true, "GetSarifUploadFunction": true,
		"GetBranchFunction": true, "ListBranchesFunction": true, "ListPrAbsentFunction": true, "GetPrSarifFunction": true}
	for _, r := range tpl.Routes {
		if r.Method == "GET" {
			qs, ok := queries[r.Path]
			if !ok {
				qs = []string{""}
			}
			for _, q := range qs {
				path := api + strings.TrimPrefix(pathParam.ReplaceAllString(r.Path, "1"), "/api") + q
				want := 403
				if scopedReads[r.Function] {
					want = 200
				}
				if resp, body := do(t, "GET", path, scopedTok.AccessToken, ""); resp.StatusCode != want {
					t.Fatalf("GET %s with a scoped token: %d %s; want %d", path, resp.StatusCode, body, want)
				}
			}
		}
	}
	// What the functions used, read while no queued invocation adds to it.
	mu.Lock()
	defer mu.Unlock()
	policies := templatePolicies(t)
	// The custom resources' functions use no DynamoDB and are not invoked
	// here: internal/dashboard's TestPublishPolicy checks the one that
	// publishes the dashboard.
	customs := 0
	for _, op := range ops.Operations() {
		if op.Kind() == "CustomResource" {
			delete(policies, ops.LogicalID(op.Name))
			customs++
		}
	}
	// Reading functions: those whose every route is a GET.
	readers := map[string]bool{}
	for _, r := range tpl.Routes {
		if _, seen := readers[r.Function]; !seen {
			readers[r.Function] = true
		}
		readers[r.Function] = readers[r.Function] && r.Method == "GET"
	}
	for fn, reads := range readers {
		if !reads {
			delete(readers, fn)
		}
	}
	if len(readers) < 10 {
		t.Errorf("%d reading functions: %v", len(readers), readers)
	}
	reads := []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Query@index/GSI1", "secretsmanager:GetSecretValue"}
	for fn, allowed := range policies {
		var got []string
		for a := range used[fn] {
			got = append(got, a)
		}
		// The one grant no step of the workflow can use: the abort of a
		// large SARIF log's multipart upload when reading the scans fails
		// midway (TestPRSARIFLargeFails shows the call).
		if abort := "s3:AbortMultipartUpload@sarif/*"; fn == "GetPrSarifFunction" && slices.Contains(allowed, abort) && !slices.Contains(got, abort) {
			got = append(got, abort)
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
		if readers[fn] {
			for _, a := range allowed {
				// GET /pr/{pr_id}/sarif writes a log too large to answer
				// under sarif/ of the bucket (never the table), and signs
				// the GET of it.
				if fn == "GetPrSarifFunction" && strings.HasSuffix(a, "@sarif/*") {
					continue
				}
				if !slices.Contains(reads, strings.Split(a, "@")[0]) {
					t.Errorf("%s reads only, but may %s", fn, a)
				}
			}
		}
	}
	// Every statement of every function limits the partitions it may use
	// (dynamodb:LeadingKeys), and every key the code used lies within them.
	// A reading function cannot read a token's partition, and only login
	// can read the username markers, which hold the password hashes.
	statements := templateStatements(t)
	for fn, sts := range statements {
		for _, st := range sts {
			if len(st.leadingKeys) == 0 && slices.ContainsFunc(st.actions, func(a string) bool { return strings.HasPrefix(a, "dynamodb:") }) {
				t.Errorf("%s: the statement of %v has no dynamodb:LeadingKeys condition", fn, st.actions)
			}
		}
		reads := false
		for _, read := range []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"} {
			reads = reads || allows(sts, read, "USERNAME#wendy")
		}
		if reads != (fn == "LoginFunction") {
			t.Errorf("%s: may read the username markers (password hashes): %v", fn, reads)
		}
	}
	for fn := range readers {
		if len(keys[fn]) == 0 {
			t.Errorf("%s used no key", fn)
		}
		for k := range keys[fn] {
			if !allows(statements[fn], k[0], k[1]) {
				t.Errorf("%s: %s of %q is outside its policy's LeadingKeys", fn, k[0], k[1])
			}
			if allows(statements[fn], k[0], "TOKEN#0123") && fn != "ListTokensFunction" { // listing tokens reads their records (hashes, never secrets)
				t.Errorf("%s: its policy lets %s read a token", fn, k[0])
			}
		}
	}
	for fn, ks := range keys {
		for k := range ks {
			if !allows(statements[fn], k[0], k[1]) {
				t.Errorf("%s: %s of %q is not allowed by its policy", fn, k[0], k[1])
			}
		}
	}
	// Every function of the operations table was checked, and each one
	// called DynamoDB in the workflow above.
	if n := len(ops.Operations()) - customs; len(policies) != n || len(used) != n {
		t.Errorf("%d functions in the template and %d that ran, of %d operations: %v", len(policies), len(used), n, fmt.Sprint(policies))
	}
}
