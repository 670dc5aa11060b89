// Package ops is the table of the service's functions: each one's name
// (its directory under functions/), what invokes it and how its handler
// is built from the dependencies. The local stack, the test harnesses and
// the checks of template.yaml, docs/openapi.yaml, functions/, the bench
// fixture and the IAM policies derive from it. No Lambda imports it: each
// functions/<op>/main.go builds its own handler with the same constructor,
// from exactly what that constructor takes, so that it links nothing of
// the others (argon2, x/text, the S3 client, the dashboard's files).
package ops

import (
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/events/delivery"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
)

// Deps is every dependency a function's handler may be built from, as the
// local stack and the tests provide them, one function at a time (each may
// have its own store or bucket). A new kind of dependency is a new method
// here, which every implementation must then provide or fail to compile.
type Deps interface {
	Store() *store.Store
	Log() *slog.Logger
	Now() time.Time        // the clock (time.Now in a Lambda; tests move it)
	Config() config.Config // TOKEN_TTL_SECONDS, UPLOAD_MAX_BYTES, the outbound switches, DASHBOARD_URL
	Cursors() api.Cursors  // the listings' cursor key
	Bucket() *bucket.Bucket
	S3() *s3.Client              // the dashboard's publisher writes its bucket with it
	Queues() deliverylane.Queues // the delivery queues
	Bus() dispatch.Bus           // the event bus
	Box() *seal.Box              // seals and opens webhook secrets and integration tokens (the secrets key, SECRETS_KEY_ID)
	// Egress is the outbound rules of webhooks (Config's LoopbackHTTP, and
	// the resolver tests replace).
	Egress() egress.Policy
	// WorkQueue sends the steps of dispatched durable work (SQS on AWS,
	// the local stack's queue); nil runs every piece of work in place.
	WorkQueue() work.Sender
}

// Operation is one Lambda function of template.yaml. Exactly one of the
// builders is set: the one of the trigger that invokes it, returning the
// handler in the form lambda.Start takes.
type Operation struct {
	// Name is the function's directory under functions/; its logical id in
	// template.yaml is LogicalID(Name).
	Name       string
	API        func(Deps) api.Handler             // API Gateway, REST proxy
	Authorizer func(Deps) api.AuthorizerHandler   // API Gateway, TOKEN authorizer
	S3         func(Deps) trigger.S3Handler       // S3 events (ObjectCreated)
	Schedule   func(Deps) trigger.ScheduleHandler // an EventBridge schedule
	Queue      func(Deps) trigger.QueueHandler    // an SQS queue (partial batch responses)
	Stream     func(Deps) trigger.StreamHandler   // a DynamoDB stream (partial batch responses)
	// CustomResource: a CloudFormation custom resource of the template.
	CustomResource func(Deps) trigger.CustomResourceHandler
}

// Kind names what invokes the operation (its set builder): "API",
// "Authorizer", "S3", "Schedule", "Queue", "Stream" or "CustomResource";
// "" when none or more than one is set.
func (o Operation) Kind() string {
	kind := ""
	for k, set := range map[string]bool{"API": o.API != nil, "Authorizer": o.Authorizer != nil, "S3": o.S3 != nil,
		"Schedule": o.Schedule != nil, "Queue": o.Queue != nil, "Stream": o.Stream != nil, "CustomResource": o.CustomResource != nil} {
		switch {
		case set && kind != "":
			return ""
		case set:
			kind = k
		}
	}
	return kind
}

// Handler builds the operation's handler from d.
func (o Operation) Handler(d Deps) any {
	switch o.Kind() {
	case "API":
		return o.API(d)
	case "Authorizer":
		return o.Authorizer(d)
	case "S3":
		return o.S3(d)
	case "Schedule":
		return o.Schedule(d)
	case "Queue":
		return o.Queue(d)
	case "Stream":
		return o.Stream(d)
	case "CustomResource":
		return o.CustomResource(d)
	}
	return nil
}

// LogicalID is the logical id in template.yaml of the function in
// functions/<name>: its name in CamelCase and "Function" (get-scan:
// GetScanFunction).
func LogicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Function"
}

// Operations is the table of every function of the service.
func Operations() []Operation {
	return append([]Operation{
		{Name: "authorizer", Authorizer: func(d Deps) api.AuthorizerHandler { return api.Authorizer(d.Store(), d.Now, d.Log()) }},
		{Name: "login", API: func(d Deps) api.Handler {
			return api.Login(d.Store(), password.Argon2id{}, d.Config().TokenTTL, d.Now, d.Log()).Handle
		}},
		{Name: "create-user", API: func(d Deps) api.Handler {
			return api.CreateUser(d.Store(), password.Argon2id{}, emailfold.Fold, d.Now, d.Log()).Handle
		}},
		{Name: "update-user", API: func(d Deps) api.Handler { return api.UpdateUser(d.Store(), emailfold.Fold, d.Now, d.Log()).Handle }},
		{Name: "record-scan", API: func(d Deps) api.Handler { return api.RecordScan(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "record-sarif", API: func(d Deps) api.Handler { return api.RecordSARIF(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "get-scan", API: func(d Deps) api.Handler { return api.GetScan(d.Store(), d.Log()).Handle }},
		{Name: "create-allowlist", API: func(d Deps) api.Handler {
			return api.CreateAllowlist(d.Store(), d.Store().Runner(d.Now, d.WorkQueue()), d.Now, d.Log()).Handle
		}},
		{Name: "update-allowlist", API: func(d Deps) api.Handler {
			return api.UpdateAllowlist(d.Store(), d.Store().Runner(d.Now, d.WorkQueue()), d.Now, d.Log()).Handle
		}},
		{Name: "create-sarif-upload", API: func(d Deps) api.Handler {
			return api.CreateSARIFUpload(d.Store(), d.Bucket(), d.Now, d.Log()).Handle
		}},
		{Name: "get-sarif-upload", API: func(d Deps) api.Handler { return api.GetSARIFUpload(d.Store(), d.Log()).Handle }},
		{Name: "ingest-sarif-upload", S3: func(d Deps) trigger.S3Handler {
			return trigger.NewIngest(d.Store(), d.Bucket(), d.Config().UploadMaxBytes, d.Now, d.Log())
		}},
		{Name: "create-token", API: func(d Deps) api.Handler { return api.CreateToken(d.Store(), emailfold.Fold, d.Now, d.Log()).Handle }},
		{Name: "revoke-token", API: func(d Deps) api.Handler { return api.RevokeToken(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "logout", API: func(d Deps) api.Handler { return api.Logout(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "list-tokens", API: func(d Deps) api.Handler { return api.ListTokens(d.Store(), d.Cursors(), d.Now, d.Log()).Handle }},
		{Name: "list-audit", API: func(d Deps) api.Handler { return api.ListAudit(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "expire-allowlists", Schedule: func(d Deps) trigger.ScheduleHandler {
			return trigger.ExpireAllowlists(d.Store(), d.Store().Runner(d.Now, d.WorkQueue()), d.Now, d.Log())
		}},
		{Name: "list-findings", API: func(d Deps) api.Handler { return api.ListFindings(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-pr", API: func(d Deps) api.Handler { return api.GetPR(d.Store(), d.Log()).Handle }},
		{Name: "list-pr-scans", API: func(d Deps) api.Handler { return api.ListPRScans(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "list-prs", API: func(d Deps) api.Handler { return api.ListPRs(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-allowlist", API: func(d Deps) api.Handler { return api.GetAllowlist(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "list-allowlists", API: func(d Deps) api.Handler {
			return api.ListAllowlists(d.Store(), d.Cursors(), d.Now, d.Log()).Handle
		}},
		{Name: "get-user", API: func(d Deps) api.Handler { return api.GetUser(d.Store(), d.Log()).Handle }},
		{Name: "get-me", API: func(d Deps) api.Handler { return api.GetMe(d.Store(), d.Log()).Handle }},
		{Name: "list-users", API: func(d Deps) api.Handler { return api.ListUsers(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "publish-dashboard", CustomResource: func(d Deps) trigger.CustomResourceHandler {
			return trigger.PublishDashboard(dashboard.Publisher{S3: d.S3()}, d.Log())
		}},
		{Name: "get-pr-gate", API: func(d Deps) api.Handler { return api.GetPRGate(d.Store(), d.Log()).Handle }},
		{Name: "get-gate-policy", API: func(d Deps) api.Handler { return api.GetGatePolicy(d.Store(), d.Log()).Handle }},
		{Name: "update-gate-policy", API: func(d Deps) api.Handler {
			return api.UpdateGatePolicy(d.Store(), d.Store().Runner(d.Now, nil), d.Now, d.Log()).Handle
		}},
		{Name: "get-repo-gate-policy", API: func(d Deps) api.Handler { return api.GetRepoGatePolicy(d.Store(), d.Log()).Handle }},
		{Name: "update-repo-gate-policy", API: func(d Deps) api.Handler {
			return api.UpdateRepoGatePolicy(d.Store(), d.Store().Runner(d.Now, nil), d.Now, d.Log()).Handle
		}},
		{Name: "delete-repo-gate-policy", API: func(d Deps) api.Handler {
			return api.DeleteRepoGatePolicy(d.Store(), d.Store().Runner(d.Now, nil), d.Now, d.Log()).Handle
		}},
		{Name: "run-work", Queue: func(d Deps) trigger.QueueHandler {
			return trigger.RunWork(d.Store().Runner(d.Now, nil), d.Log())
		}},
		{Name: "get-reevaluation", API: func(d Deps) api.Handler { return api.GetReevaluation(d.Store(), d.Log()).Handle }},
		{Name: "get-branch", API: func(d Deps) api.Handler { return api.GetBranch(d.Store(), d.Log()).Handle }},
		{Name: "list-branches", API: func(d Deps) api.Handler { return api.ListBranches(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "list-pr-absent", API: func(d Deps) api.Handler { return api.ListAbsent(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-pr-sarif", API: func(d Deps) api.Handler {
			return api.GetPRSARIF(d.Store(), d.Bucket(), d.Config().SARIFInlineMax, d.Log()).Handle
		}},
	}, eventOperations()...)
}

// eventOperations are the functions of events: the webhook and
// integration routes, the dispatcher and the deliverer.
func eventOperations() []Operation {
	return []Operation{
		{Name: "create-webhook", API: func(d Deps) api.Handler {
			return api.CreateWebhook(d.Store(), d.Box(), d.Egress(), d.Now, d.Log()).Handle
		}},
		{Name: "list-webhooks", API: func(d Deps) api.Handler { return api.ListWebhooks(d.Store(), d.Cursors(), d.Now, d.Log()).Handle }},
		{Name: "get-webhook", API: func(d Deps) api.Handler { return api.GetWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "update-webhook", API: func(d Deps) api.Handler { return api.UpdateWebhook(d.Store(), d.Egress(), d.Now, d.Log()).Handle }},
		{Name: "delete-webhook", API: func(d Deps) api.Handler { return api.DeleteWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "test-webhook", API: func(d Deps) api.Handler { return api.TestWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "rotate-webhook-secret", API: func(d Deps) api.Handler {
			return api.RotateWebhookSecret(d.Store(), d.Box(), d.Now, d.Log()).Handle
		}},
		{Name: "list-webhook-deliveries", API: func(d Deps) api.Handler {
			return api.ListWebhookDeliveries(d.Store(), d.Cursors(), d.Log()).Handle
		}},
		{Name: "redeliver-webhook-delivery", API: func(d Deps) api.Handler {
			return api.RedeliverWebhookDelivery(d.Store(), d.Queues(), d.Now, d.Log()).Handle
		}},
		{Name: "put-integration", API: func(d Deps) api.Handler {
			return api.PutIntegration(d.Store(), d.Box(), d.Egress().WithPrivate(d.Config().PrivateIntegrations), d.Now, d.Log()).Handle
		}},
		{Name: "get-integration", API: func(d Deps) api.Handler { return api.GetIntegration(d.Store(), d.Log()).Handle }},
		{Name: "delete-integration", API: func(d Deps) api.Handler { return api.DeleteIntegration(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "put-oidc-trust", API: func(d Deps) api.Handler { return api.PutOIDCTrust(d.Store(), d.Egress(), d.Now, d.Log()).Handle }},
		{Name: "get-oidc-trust", API: func(d Deps) api.Handler { return api.GetOIDCTrust(d.Store(), d.Log()).Handle }},
		{Name: "delete-oidc-trust", API: func(d Deps) api.Handler { return api.DeleteOIDCTrust(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "dispatch-events", Stream: func(d Deps) trigger.StreamHandler {
			return dispatch.NewDispatcher(d.Store(), d.Bus(), d.Queues(), d.Now, d.Log())
		}},
		{Name: "deliver-events", Queue: func(d Deps) trigger.QueueHandler {
			return delivery.NewDeliverer(d.Store(), d.Queues(), d.Box(), d.Egress(), d.Config(), d.Now, d.Log())
		}},
	}
}
