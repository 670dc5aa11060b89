package lambdarun_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/oauth2"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/lambdarun"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/oidcprovider"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/secretstest"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/usecase"
)

// functions are the Lambdas measured, after the baseline: every function
// of the operations table, or those SCANGATE_BENCH_FUNCTIONS names
// (comma-separated), to measure a few new ones without the others.
func functions() []string {
	only := strings.Split(os.Getenv("SCANGATE_BENCH_FUNCTIONS"), ",")
	var names []string
	for _, op := range ops.Operations() {
		if only[0] == "" || slices.Contains(only, op.Name) {
			names = append(names, op.Name)
		}
	}
	return names
}

// references are the binaries measured beside the functions: the
// baseline (the usual hello world, its client built with
// config.LoadDefaultConfig) and the floor (a DynamoDB client built from
// the environment as the functions build theirs, and nothing else).
var references = []string{"baseline", "floor"}

// pkgOf is the main package of a measured binary.
func pkgOf(name string) string {
	if slices.Contains(references, name) {
		return "./internal/lambdarun/testdata/" + name
	}
	return "./functions/" + name
}

// build compiles a main package with the Lambda flags of the Makefile.
func build(b *testing.B, dir, pkg, goarch string) string {
	return buildWith(b, dir, pkg, goarch, "-s -w -buildid=")
}

// buildWith compiles a main package with the Lambda flags but ldflags.
func buildWith(b *testing.B, dir, pkg, goarch, ldflags string) string {
	b.Helper()
	out := filepath.Join(dir, goarch+ldflags, filepath.Base(pkg), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags="+ldflags, "-o", out, pkg)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build %s: %v\n%s", pkg, err, b))
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// fixture is a table with an admin, a token, a scan and an allowlist, and
// the events each function is invoked with.
type fixture struct {
	env    []string
	events map[string]func(i int) []byte
	store  *store.Store
	s3url  string
	sso    config.SSO // single sign-on against the fixture's OpenID provider
}

// The fixture's client at its OpenID provider (single sign-on).
const (
	benchSSOClient   = "scangate-bench"
	benchSSOSecret   = "bench-client-secret-0123456789abcdef"
	benchSSORedirect = "http://127.0.0.1:9/"
)

// ssoEvent is a POST /api/auth/oidc/session of a new code: alice (an
// admin by the fixture's mapping) signed in at the provider, as the
// dashboard does it (PKCE S256, state, nonce).
func ssoEvent(b testing.TB, p *oidcprovider.Provider) func(int) []byte {
	return func(int) []byte {
		ctx := context.Background()
		verifier, nonce, state := oauth2.GenerateVerifier(), oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
		conf := oauth2.Config{ClientID: benchSSOClient, Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/auth"}, RedirectURL: benchSSORedirect,
			Scopes: []string{"openid", "email", "profile", "groups"}}
		back, err := p.SignIn(ctx, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", nonce)), "alice")
		if err != nil {
			b.Errorf("sign alice in at the provider: %v", err)
			return nil
		}
		body, _ := json.Marshal(map[string]string{"code": back.Query().Get("code"), "code_verifier": verifier, "redirect_uri": benchSSORedirect, "nonce": nonce})
		return proxyAs(nil, "", "POST", "/api/auth/oidc/session", nil, string(body))
	}
}

// adminProxy makes API Gateway proxy events of the admin (user 1) that
// present its token (writes check it).
func adminProxy(token string) func(method, path string, params map[string]string, body string) []byte {
	return func(method, path string, params map[string]string, body string) []byte {
		return proxyAs(map[string]any{"user_id": "1", "username": "admin", "role": "admin"}, token, method, path, params, body)
	}
}

// proxyAs is an API Gateway proxy event whose authorizer context is caller
// and which presents token (writes check it).
func proxyAs(caller map[string]any, token, method, path string, params map[string]string, body string) []byte {
	b, _ := json.Marshal(map[string]any{
		"httpMethod": method, "path": path, "resource": path, "pathParameters": params, "body": body,
		"headers":        map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + token},
		"requestContext": map[string]any{"requestId": "bench", "authorizer": caller},
	})
	return b
}

// tokenEvents are the events of the token functions and the others that
// each need a fresh thing (those of the admin present its token admin): n tokens to revoke and n to log out with
// (issued to the admin), users enough that n personal tokens stay under
// the limit of each, and a SARIF log.
func tokenEvents(b testing.TB, st *store.Store, admin string, n int) map[string]func(int) []byte {
	ctx := context.Background()
	proxy := adminProxy(admin)
	who := scangate.Who{RequestID: "bench-fixture"}
	issue := func(user int64) (int64, string) {
		tok, _ := auth.NewToken(user)
		t := scangate.Token{Hash: auth.HashToken(tok), UserID: user, Kind: scangate.TokenLogin, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
		id, err := st.TokenID(ctx)
		if err != nil {
			b.Fatal(err)
		}
		t.ID = id
		if err := st.PutToken(ctx, t, who); err != nil {
			b.Fatal(err)
		}
		return id, tok
	}
	ids, secrets := make([]int64, 2*n), make([]string, 2*n)
	for i := range ids {
		ids[i], secrets[i] = issue(1)
	}
	var users []int64
	var userTokens []string
	for i := range n/scangate.MaxPersonalTokens + 1 {
		name := fmt.Sprintf("bench-tokens-%d", i)
		u, err := st.CreateUser(ctx, scangate.User{Username: name, Email: name + "@example.com", EmailKey: name + "@example.com",
			Role: scangate.RoleUser, Active: true, PasswordHash: "x", CreatedAt: scangate.At(time.Now())}, who)
		if err != nil {
			b.Fatal(err)
		}
		_, tok := issue(u.ID)
		users, userTokens = append(users, u.ID), append(userTokens, tok)
	}
	sarifLog := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[{"ruleId":"generic-api-key",` +
		`"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.env"},"region":{"startLine":1,"snippet":{"text":"v"}}}}]}]}]}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(sarifLog))
	_ = zw.Close()
	envelope := `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":101,"repo_name":"o/r","webhook_id":1,` +
		`"pr":{"pr_id":10,"pr_name":"n","pr_link":"l"},"sarif":"` + base64.StdEncoding.EncodeToString(gz.Bytes()) + `"}`
	return map[string]func(int) []byte{
		"record-sarif": func(int) []byte { return proxy("POST", "/api/pr/scan/sarif", nil, envelope) },
		"create-token": func(i int) []byte {
			k := i / scangate.MaxPersonalTokens
			return proxyAs(map[string]any{"user_id": strconv.FormatInt(users[k], 10), "username": "bench", "role": "user"}, userTokens[k],
				"POST", "/api/auth/tokens", nil, fmt.Sprintf(`{"name":"bench-%d"}`, i))
		},
		"revoke-token": func(i int) []byte {
			id := strconv.FormatInt(ids[i], 10)
			return proxy("DELETE", "/api/auth/tokens/"+id, map[string]string{"token_id": id}, "")
		},
		"logout": func(i int) []byte {
			return proxyAs(map[string]any{"user_id": "1", "username": "admin", "role": "admin", "token_id": strconv.FormatInt(ids[n+i], 10)},
				secrets[n+i], "DELETE", "/api/auth/token", nil, "")
		},
		"expire-allowlists": func(int) []byte {
			return []byte(`{"version":"0","id":"bench","detail-type":"Scheduled Event","source":"aws.events","account":"1",` +
				`"time":"2026-11-23T00:00:00Z","region":"us-east-1","resources":[],"detail":{}}`)
		},
	}
}

func newFixture(b testing.TB) fixture {
	ctx := context.Background()
	emb, err := localstack.StartEmbedded()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = emb.Close() })
	db, err := awsclient.NewDynamoDB(ctx, emb.URL)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.CreateTable(ctx, db, "bench"); err != nil {
		b.Fatal(err)
	}
	st := store.New(db, "bench")
	const adminPassword = "bench-password-1"
	bootstrap := auth.Bootstrap{Store: st, Passwords: password.Argon2id{}, Fold: emailfold.Fold, Who: scangate.Who{RequestID: "bench-bootstrap"}}
	if _, err := bootstrap.Admin(ctx, "admin", "admin@example.com", adminPassword); err != nil {
		b.Fatal(err)
	}
	tok, _ := auth.NewToken(1)
	if err := st.PutToken(ctx, scangate.Token{Hash: auth.HashToken(tok), UserID: 1, Kind: "cli", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}, scangate.Who{RequestID: "test"}); err != nil {
		b.Fatal(err)
	}
	proxy := adminProxy(tok)
	if err := localstack.Seed(ctx, st, time.Now()); err != nil {
		b.Fatal(err)
	}
	_, reeval, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:5f2b9c0e8d1a", Active: true}}, "", scangate.Who{RequestID: "test"}, time.Now(), 0)
	if err != nil {
		b.Fatal(err)
	}
	// A branch analysis: branch 1 (main) of repository 101 (after the
	// allowlist: its re-evaluation is work 1, which GET
	// /reevaluations/{id}'s event names; the analysis's own work, the
	// re-classification of the PRs based on main, is work 2).
	if _, _, err := st.RecordScan(ctx, scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v", RepoID: 101,
		RepoName: "o/r", WebhookID: 1, Branch: "main", Status: "completed"}, scangate.Who{RequestID: "test"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	// Its re-evaluation, planned, is the work function's: the first
	// invocation runs its step, the others find it done.
	if reeval, err = usecase.Runner(st, time.Now, nil).Plan(ctx, reeval); err != nil {
		b.Fatal(err)
	}
	step, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "bench", Body: work.Message(reeval.ID, 0),
		EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:1:WorkQueue"}}})
	if _, err := st.CreateUpload(ctx, scangate.Upload{CreatedBy: 1, CreatedAt: scangate.At(time.Now()),
		ExpiresAt: scangate.At(time.Now().Add(scangate.UploadURLTTL))}, scangate.UploadRetention); err != nil {
		b.Fatal(err)
	}
	scan := `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":101,"repo_name":"o/r","webhook_id":1,` +
		`"status":"completed","pr":{"pr_id":10,"pr_name":"n","pr_link":"l"},"findings":[{"name":"sha256:5f2b9c0e8d1a"}]}`
	run := time.Now().UnixNano()
	s3url := startS3(b)
	dashURL := dashboardFixture(b, s3url)
	// The keys, read from a stand-in of Secrets Manager at first use, as
	// on AWS.
	keys := secretstest.Start(b, map[string]string{"cursor-key": strings.Repeat("A", 64),
		"secrets-key": base64.StdEncoding.EncodeToString([]byte(localstack.HarnessSecretsKey)), "sso-client-secret": benchSSOSecret})
	provider := oidcprovider.Start(b, oidcprovider.Options{Clients: []oidcprovider.Client{{ID: benchSSOClient, Secret: benchSSOSecret,
		RedirectURIs: []string{benchSSORedirect}, GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"}}}})
	ssoRoles := `{"admins":["sec-team"],"users":["developers"],"readonly":["auditors"]}`
	fx := fixture{
		store: st, s3url: s3url, sso: config.SSO{Issuer: provider.Issuer, ClientID: benchSSOClient, Roles: ssoRoles, ClientSecret: benchSSOSecret},
		env: []string{"TABLE_NAME=bench", "DYNAMODB_ENDPOINT=" + emb.URL, "LOG_LEVEL=ERROR", "CURSOR_KEY_ID=cursor-key",
			"SECRETSMANAGER_ENDPOINT=" + keys.URL,
			"SSO_ISSUER=" + provider.Issuer, "SSO_CLIENT_ID=" + benchSSOClient, "SSO_ROLES=" + ssoRoles, "SSO_CLIENT_SECRET_ID=sso-client-secret",
			"EGRESS_LOOPBACK_HTTP=true",
			"UPLOADS_BUCKET=" + benchBucket, "S3_ENDPOINT=" + s3url, "WORK_QUEUE_URL=https://sqs.us-east-1.amazonaws.com/1/bench-work"},
		events: map[string]func(int) []byte{
			"baseline": func(int) []byte { return []byte(`{}`) },
			"floor":    func(int) []byte { return []byte(`{}`) },
			"authorizer": func(int) []byte {
				return []byte(`{"type":"TOKEN","authorizationToken":"Bearer ` + tok + `","methodArn":"arn:aws:execute-api:us-east-1:1:a/prod/GET/api/pr/scan/1"}`)
			},
			"login": func(int) []byte {
				return proxy("POST", "/api/auth/token", nil, `{"username":"admin","password":"`+adminPassword+`"}`)
			},
			"create-oidc-session": ssoEvent(b, provider),
			"create-user": func(i int) []byte {
				return proxy("POST", "/api/users", nil, fmt.Sprintf(`{"username":"u%d-%d","user_email":"u%d-%d@example.com","password":"password-123","role":"user"}`, run, i, run, i))
			},
			"update-user": func(int) []byte {
				return proxy("PUT", "/api/users/1", map[string]string{"user_id": "1"}, `{"role":"admin","active":true,"user_email":"admin@example.com"}`)
			},
			"record-scan": func(int) []byte { return proxy("POST", "/api/pr/scan", nil, scan) },
			"fastapi":     func(int) []byte { return proxy("GET", "/api/pr/scan/1", map[string]string{"pr_scan_id": "1"}, "") },
			"create-allowlist": func(int) []byte {
				return proxy("POST", "/api/whitelist", nil, `{"type":"VULNERABILITY","name":"CVE-2021-44228","reason":"accepted_risk"}`)
			},
			"create-sarif-upload": func(int) []byte {
				return proxy("POST", "/api/pr/scan/sarif/uploads", nil, `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":101,"repo_name":"o/r",`+
					`"webhook_id":1,"pr":{"pr_id":10,"pr_name":"n","pr_link":"l"}}`)
			},
			// An object of no upload: read the record, delete the object.
			"ingest-sarif-upload": func(i int) []byte { return s3Event(benchBucket, int64(1_000_000+i), 100) },
			// A comment, until the allowlist holds nearly the most it may;
			// then its reason, changed each time.
			"update-allowlist": func(i int) []byte {
				body := `{"comment":"bench"}`
				if i >= store.MaxComments-10 {
					body = `{"reason":"` + scangate.Reasons[i%2] + `"}`
				}
				return proxy("PUT", "/api/whitelist/1", map[string]string{"whitelist_id": "1"}, body)
			},
			// Publish the dashboard into a bucket of its own, answering
			// a stand-in for CloudFormation's response URL.
			"publish-dashboard": func(int) []byte {
				ev, _ := json.Marshal(cfn.Event{RequestType: cfn.RequestCreate, RequestID: "bench", ResponseURL: dashURL, LogicalResourceID: "Dashboard",
					StackID: "bench", ResourceProperties: map[string]any{"Bucket": dashboardBucket, "ApiUrl": "https://bench.execute-api.us-east-1.amazonaws.com/prod/api"}})
				return ev
			},
			"update-gate-policy": func(int) []byte {
				return proxy("PUT", "/api/gate/policy", nil, `{"block_severity":{"VULNERABILITY":"medium"}}`)
			},
			"update-repo-gate-policy": func(int) []byte {
				return proxy("PUT", "/api/gate/policy/repos/101", map[string]string{"repo_id": "101"}, `{"required":[{"scan_type":"SECRET","category":"gitleaks"}]}`)
			},
			"run-work": func(int) []byte { return step },
			"list-branches": func(int) []byte {
				var ev map[string]any
				_ = json.Unmarshal(proxy("GET", "/api/branches", nil, ""), &ev)
				ev["queryStringParameters"] = map[string]string{"vc_id": "1", "repo_id": "101"}
				out, _ := json.Marshal(ev)
				return out
			},
			"delete-repo-gate-policy": func(int) []byte {
				return proxy("DELETE", "/api/gate/policy/repos/101", map[string]string{"repo_id": "101"}, "")
			},
		},
	}
	maps.Copy(fx.events, tokenEvents(b, st, tok, 6*rounds(b)))
	events, env := eventsFixture(b, st, proxy, 6*rounds(b))
	maps.Copy(fx.events, events)
	fx.env = append(fx.env, env...)
	// Every GET route without an event of its own is read with each path
	// id 1, which the fixture holds for every kind of record.
	tpl, err := gateway.ReadTemplate("../../template.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range ops.Operations() {
		for _, r := range tpl.Routes {
			if r.Function == ops.LogicalID(op.Name) && r.Method == "GET" && fx.events[op.Name] == nil {
				params := map[string]string{}
				path := pathParam.ReplaceAllStringFunc(r.Path, func(p string) string { params[p[1:len(p)-1]] = "1"; return "1" })
				fx.events[op.Name] = func(int) []byte { return proxy("GET", path, params, "") }
			}
		}
	}
	return fx
}

// pathParam is a parameter of a route's path: {pr_scan_id}.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// notHTTP are the functions whose answers are not HTTP responses.
var notHTTP = []string{"baseline", "floor", "authorizer", "ingest-sarif-upload", "expire-allowlists", "publish-dashboard", "run-work",
	"dispatch-events", "deliver-events"}

// dashboardBucket is the bucket the publishing function writes into.
const dashboardBucket = "bench-dashboard"

// dashboardFixture creates the dashboard's bucket on the S3 server and
// starts a stand-in for CloudFormation's response URL, whose URL it
// answers; an answer other than SUCCESS fails b.
func dashboardFixture(b testing.TB, s3url string) string {
	name := dashboardBucket
	if _, err := openBucket(b, s3url).Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		b.Fatal(err)
	}
	cf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var resp cfn.Response
		if err := json.NewDecoder(r.Body).Decode(&resp); err != nil || resp.Status != cfn.StatusSuccess {
			b.Errorf("the dashboard's publisher answered CloudFormation %+v, %v", resp, err)
		}
	}))
	b.Cleanup(cf.Close)
	return cf.URL
}

// rounds is how many times each binary is started; SCANGATE_BENCH_ROUNDS
// overrides it.
func rounds(b testing.TB) int {
	n := 15
	if v := os.Getenv("SCANGATE_BENCH_ROUNDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("SCANGATE_BENCH_ROUNDS %q", v)
		}
	}
	return n
}

// samples are what the runs of one binary measured.
type samples struct {
	inits, warm []time.Duration
	rss         int64
}

// BenchmarkColdStart runs each function's bootstrap (built for this
// machine) under the local Runtime API, each process started with exactly
// the environment Lambda gives a provided.al2023 function
// (lambdarun.LambdaEnv) and the function's own, beside the baseline, the
// floor and, when SCANGATE_BENCH_PYTHON names a Python with the packages
// of testdata/fastapi/requirements.txt (make bench installs them), the
// FastAPI + Mangum function started by awslambdaric: init (process start
// to first poll of next), warm invocation latency (invocations after the
// first) and peak memory, with ratios to the baseline (and init to the
// floor, of the medians and of the fastest starts). The binaries take turns, one start each per round, so a drift of
// the machine during the run touches them all alike.
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	fx := newFixture(b)
	ctx := context.Background()
	names := append(slices.Clone(references), functions()...)
	procs := map[string]lambdarun.Process{}
	for _, name := range names {
		procs[name] = lambdarun.Process{Argv: []string{build(b, dir, pkgOf(name), runtime.GOARCH)}, Name: name, Env: fx.env}
	}
	if py := os.Getenv("SCANGATE_BENCH_PYTHON"); py != "" {
		names = append(names, "fastapi")
		procs["fastapi"] = lambdarun.Process{Argv: []string{py, "-m", "awslambdaric", "app.handler"}, Dir: "testdata/fastapi", Name: "fastapi",
			Env: append(slices.Clone(fx.env), "PYTHONDONTWRITEBYTECODE=1")}
	} else {
		b.Log("SCANGATE_BENCH_PYTHON is not set: the FastAPI + Mangum function is not measured (make bench sets it)")
	}
	// One unmeasured run each first, so that every binary starts from a
	// warm page cache.
	for _, name := range names {
		if _, err := lambdarun.RunProcess(ctx, procs[name], nil); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	got := map[string]*samples{}
	for round := range rounds(b) {
		for _, name := range names {
			events := make([][]byte, 6)
			for j := range events {
				events[j] = fx.events[name](6*round + j)
			}
			res, err := lambdarun.RunProcess(ctx, procs[name], events)
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			for _, r := range res.Responses {
				var resp struct {
					StatusCode int `json:"statusCode"`
				}
				if !slices.Contains(notHTTP, name) && (json.Unmarshal(r, &resp) != nil || resp.StatusCode/100 != 2) {
					b.Fatalf("%s answered %s", name, r)
				}
			}
			if got[name] == nil {
				got[name] = &samples{}
			}
			s := got[name]
			s.inits = append(s.inits, res.Init)
			s.warm = append(s.warm, res.Invocations[1:]...)
			s.rss = max(s.rss, res.PeakRSS)
		}
	}
	base := got["baseline"]
	for _, name := range names {
		s := got[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
			}
			init := median(s.inits)
			b.ReportMetric(float64(init.Microseconds())/1000, "init-ms")
			b.ReportMetric(float64(init)/float64(median(base.inits)), "init-x-baseline")
			b.ReportMetric(float64(init)/float64(median(got["floor"].inits)), "init-x-floor")
			// The fastest start of each, the figure least touched by other
			// work on a shared machine.
			b.ReportMetric(float64(slices.Min(s.inits))/float64(slices.Min(got["floor"].inits)), "init-min-x-floor")
			b.ReportMetric(float64(median(s.warm).Microseconds())/1000, "warm-ms")
			b.ReportMetric(float64(s.rss)/1024, "peak-MiB")
			b.ReportMetric(float64(s.rss)/float64(base.rss), "mem-x-baseline")
		})
	}
}

// BenchmarkSize builds each linux/arm64 bootstrap as `make build` does,
// zips it as SAM does, and compares both with the baseline's. It also
// reads the symbols of each binary built with its symbol table (go tool
// nm) and fails if a function that never hashes a password links argon2.
func BenchmarkSize(b *testing.B) {
	dir := b.TempDir()
	var base, baseZip float64
	for _, name := range append(slices.Clone(references), functions()...) {
		bin := build(b, dir, pkgOf(name), "arm64")
		argon2 := argon2Symbols(b, buildWith(b, dir, pkgOf(name), "arm64", "-buildid="))
		hashes := name == "login" || name == "create-user"
		if hashes != (argon2 > 0) {
			b.Fatalf("%s links %d symbols of golang.org/x/crypto/argon2", name, argon2)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
			}
			raw, err := os.ReadFile(bin)
			if err != nil {
				b.Fatal(err)
			}
			var zipped bytes.Buffer
			zw := zip.NewWriter(&zipped)
			w, _ := zw.Create("bootstrap")
			_, _ = w.Write(raw)
			_ = zw.Close()
			if name == "baseline" {
				base, baseZip = float64(len(raw)), float64(zipped.Len())
			}
			b.ReportMetric(float64(len(raw))/(1<<20), "MiB")
			b.ReportMetric(float64(len(raw))/base, "size-x-baseline")
			b.ReportMetric(float64(zipped.Len())/(1<<20), "zip-MiB")
			b.ReportMetric(float64(zipped.Len())/baseZip, "zip-x-baseline")
			b.ReportMetric(float64(argon2), "argon2-symbols")
		})
	}
}

// argon2Symbols counts the symbols of golang.org/x/crypto/argon2 in a
// binary built with its symbol table.
func argon2Symbols(b *testing.B, bin string) int {
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		b.Fatalf("go tool nm %s: %v", bin, err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[len(f)-1], "golang.org/x/crypto/argon2.") {
			n++
		}
	}
	return n
}

// TestEveryFunctionHasABenchEvent keeps make bench whole: every function
// of the operations table has a cold-start event (its own, or a GET
// route's derived one), and answers it, built in process from the
// fixture's table and bucket, with a 2xx (an HTTP function) or no error.
// An operation added without one would stop the benchmark at it.
func TestEveryFunctionHasABenchEvent(t *testing.T) {
	fx := newFixture(t)
	d := fixtureDeps{fx: fx, bucket: openBucket(t, fx.s3url), EventDeps: localstack.NewEventDeps()}
	for _, op := range ops.Operations() {
		if fx.events[op.Name] == nil {
			t.Errorf("the cold-start fixture has no event for %s", op.Name)
			continue
		}
		out, err := lambda.NewHandler(op.Handler(d)).Invoke(context.Background(), fx.events[op.Name](0))
		var resp struct {
			StatusCode int `json:"statusCode"`
		}
		if err != nil || !slices.Contains(notHTTP, op.Name) && (json.Unmarshal(out, &resp) != nil || resp.StatusCode/100 != 2) {
			t.Errorf("%s answered its bench event with %s, %v", op.Name, out, err)
		}
	}
}

// fixtureDeps are the fixture's dependencies of the functions (ops.Deps).
type fixtureDeps struct {
	fx     fixture
	bucket *bucket.Bucket
	localstack.EventDeps
}

func (d fixtureDeps) Store() *store.Store    { return d.fx.store }
func (d fixtureDeps) Log() *slog.Logger      { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }
func (d fixtureDeps) Now() time.Time         { return time.Now() }
func (d fixtureDeps) Bucket() *bucket.Bucket { return d.bucket }
func (d fixtureDeps) WorkQueue() work.Sender { return nil }
func (d fixtureDeps) SSOSecret() func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return d.fx.sso.ClientSecret, nil }
}
func (d fixtureDeps) S3() *s3.Client { return d.bucket.Client() }
func (d fixtureDeps) Config() config.Config {
	return config.Config{TokenTTL: time.Hour, UploadMaxBytes: config.MaxUploadBytes, SSO: d.fx.sso, LoopbackHTTP: true}
}

func (d fixtureDeps) Cursors() api.Cursors {
	c, _ := api.NewCursors(make([]byte, 32))
	return c
}
