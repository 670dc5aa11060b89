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
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/ciauth"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/events/delivery"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/sso"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
	"github.com/scangate/scangate/internal/usecase"
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
	// SSOSecret reads the client secret of single sign-on (Secrets
	// Manager's SSO_CLIENT_SECRET_ID on AWS, the local stack's own).
	SSOSecret() func(context.Context) (string, error)
}

// Operation is one Lambda function of template.yaml. Exactly one of the
// builders is set: the one of the trigger that invokes it, returning the
// handler in the form lambda.Start takes.
type Operation struct {
	// Name is the function's directory under functions/; its logical id in
	// template.yaml is LogicalID(Name).
	Name string
	// Method and Path are an API operation's route ("GET",
	// "/api/pr/scan/{pr_scan_id}"); Public ones are called without a token
	// (the authorizer does not run).
	Method, Path string
	Public       bool
	// Description says what the function does (after its route, if any),
	// in template.yaml and its main's comment.
	Description string
	// Grants are the function's own IAM statements; the write-time check
	// of an authenticated write and what its dependencies need (the
	// cursors' key, the work queue) are added to them (Operation.Policy).
	Grants []Grant
	// MemorySize in MB, when not the Globals' 256.
	MemorySize int
	// Env is the function's own environment beyond what its dependencies
	// read (Operation.Environment), as YAML flow values by name.
	Env map[string]string
	// Properties are the rest of the function's properties in
	// template.yaml, as YAML (a trigger's Events, a dead-letter queue,
	// reserved concurrency, a timeout), written as they are.
	Properties string
	// Checkov are the template checks the function does not follow, and
	// why; nil is those of an API function.
	Checkov []Skip
	// The builders, one set:
	API        func(Deps) api.Handler             // API Gateway, REST proxy
	Authorizer func(Deps) api.AuthorizerHandler   // API Gateway, TOKEN authorizer
	S3         func(Deps) trigger.S3Handler       // S3 events (ObjectCreated)
	Schedule   func(Deps) trigger.ScheduleHandler // an EventBridge schedule
	Queue      func(Deps) trigger.QueueHandler    // an SQS queue (partial batch responses)
	Stream     func(Deps) trigger.StreamHandler   // a DynamoDB stream (partial batch responses)
	// CustomResource: a CloudFormation custom resource of the template.
	CustomResource func(Deps) trigger.CustomResourceHandler
}

// uploadObjects are the objects of uploads in the uploads bucket, whose
// name is derived from the stack's id (template.yaml's UploadsBucket).
const uploadObjects = `!Sub ["arn:${AWS::Partition}:s3:::scangate-uploads-${StackUuid}/uploads/*", ` + stackUUID + `]`

// sarifObjects are the SARIF logs too large to answer inline, in the
// uploads bucket (api.GetPRSARIF).
const sarifObjects = `!Sub ["arn:${AWS::Partition}:s3:::scangate-uploads-${StackUuid}/sarif/*", ` + stackUUID + `]`

// uploadsBucket is the uploads bucket's name (UPLOADS_BUCKET).
const uploadsBucket = `!Sub ["scangate-uploads-${StackUuid}", ` + stackUUID + `]`

const stackUUID = `{StackUuid: !Select [2, !Split ["/", !Ref AWS::StackId]]}`

// Skip is a checkov check that a resource does not follow, and why.
type Skip struct{ ID, Comment string }

// writeCheckKeys are the keys of the write-time check: the token a request
// presents and its user, read in one BatchGetItem before a write.
func writeCheckKeys() []string { return []string{store.KeyUser, store.KeyToken} }

// recordingKeys are the keys recording a scan writes and reads (the scan,
// its pull request or branch, their work, group, counters, policy, audit
// and events): record-scan's, record-sarif's and ingest's.
func recordingKeys() []string {
	return []string{store.KeyScan, store.KeyPR, store.KeyPRID, store.KeyBranch, store.KeyBranchID, store.KeyWork, store.KeyGroup, store.KeyCounter, store.KeyPolicy, store.KeyAudit, store.KeyEvent}
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
		{Name: "authorizer",
			Description: "TOKEN authorizer; one BatchGetItem per uncached token, and at most one UpdateItem a minute a token (last use).",
			Grants: []Grant{
				onTable("BatchGetItem UpdateItem", store.KeyToken, store.KeyUser),
			},
			Authorizer: func(d Deps) api.AuthorizerHandler { return api.Authorizer(d.Store(), d.Now, d.Log()) }},
		{Name: "login",
			Env:    map[string]string{"PASSWORD_LOGIN": "!Ref PasswordLogin"},
			Method: "POST", Path: "/api/auth/token",
			Description: "log in.",
			Public:      true,
			Grants: []Grant{
				onTable("BatchGetItem UpdateItem PutItem", store.KeyUsername, store.KeyLoginFail, store.KeyToken, store.KeyTokenID, store.KeyCounter, store.KeyAudit, store.KeyAuditLogin),
			},
			API: func(d Deps) api.Handler {
				return api.Login(d.Store(), password.Argon2id{}, d.Config().TokenTTL, d.Config().PasswordLoginOff, d.Now, d.Log()).Handle
			}},
		{Name: "create-oidc-session",
			Env:    map[string]string{"SSO_ISSUER": "!Ref SsoIssuer", "SSO_CLIENT_ID": "!Ref SsoClientId", "SSO_CLAIM": "!Ref SsoClaim", "SSO_ROLES": "!Ref SsoRoleMapping"},
			Method: "POST", Path: "/api/auth/oidc/session",
			Public:      true,
			Description: "sign in through single sign-on.",
			Grants: []Grant{
				onTable("GetItem", store.KeySSO, store.KeyUser).because("Reads the person's marker and user only: never a username marker (password hashes) nor a token."),
				onTable("UpdateItem PutItem", store.KeySSO, store.KeyUser, store.KeyUsername, store.KeyEmail, store.KeyToken, store.KeyTokenID, store.KeyCounter, store.KeyAudit, store.KeyAuditLogin),
			},
			API: func(d Deps) api.Handler {
				return api.OIDCSession(sso.Open(d.Config(), d.SSOSecret(), d.Egress().Client(sso.Timeout), d.Store(), emailfold.Fold, d.Now), d.Log()).Handle
			}},
		{Name: "create-user",
			Method: "POST", Path: "/api/users",
			Description: "Create New User.",
			Grants: []Grant{
				onTable("UpdateItem PutItem", store.KeyUser, store.KeyUsername, store.KeyEmail, store.KeyCounter, store.KeyAudit).because("It reads no username marker (the password hash is there)."),
			},
			API: func(d Deps) api.Handler {
				return api.CreateUser(d.Store(), password.Argon2id{}, emailfold.Fold, d.Now, d.Log()).Handle
			}},
		{Name: "update-user",
			Method: "PUT", Path: "/api/users/{user_id}",
			Description: "Update Existing User.",
			Grants: []Grant{
				onTable("GetItem", store.KeyUser).because("It reads the caller's and the user's records, never a username marker (the password hash is there)."),
				onTable("PutItem UpdateItem DeleteItem", store.KeyUser, store.KeyUsername, store.KeyEmail, store.KeyCounter, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.UpdateUser(d.Store(), emailfold.Fold, d.Now, d.Log()).Handle }},
		{Name: "record-scan",
			Method: "POST", Path: "/api/pr/scan",
			Description: "record a pull-request scan and its findings.",
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query PutItem UpdateItem BatchWriteItem", recordingKeys()...),
			},
			API: func(d Deps) api.Handler { return api.RecordScan(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "record-sarif",
			Method: "POST", Path: "/api/pr/scan/sarif",
			Description: "record scans from a scanner's SARIF log (up to 6 MB; 25,000 results a run).",
			MemorySize:  1024,
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query PutItem UpdateItem BatchWriteItem", recordingKeys()...),
			},
			API: func(d Deps) api.Handler { return api.RecordSARIF(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "get-scan",
			Method: "GET", Path: "/api/pr/scan/{pr_scan_id}",
			Description: "Get Pr Scan By Id Route.",
			Grants: []Grant{
				onTable("GetItem", store.KeyScan, store.KeyPR),
			},
			API: func(d Deps) api.Handler { return api.GetScan(d.Store(), d.Log()).Handle }},
		{Name: "create-allowlist",
			Method: "POST", Path: "/api/whitelist",
			Description: "create an allowlist and re-evaluate the findings it covers.",
			Grants: []Grant{
				onTable("GetItem PutItem UpdateItem BatchGetItem Query", store.KeyAllow, store.KeyGroup, store.KeyScan, store.KeyPR, store.KeyCounter, store.KeyAudit, store.KeyPolicy, store.KeyWork, store.KeyEvent),
				onIndex("GSI1", "Query", store.KeyFinding),
			},
			API: func(d Deps) api.Handler {
				return api.CreateAllowlist(d.Store(), usecase.Runner(d.Store(), d.Now, d.WorkQueue()), d.Now, d.Log()).Handle
			}},
		{Name: "update-allowlist",
			Method: "PUT", Path: "/api/whitelist/{whitelist_id}",
			Description: "Modify Allowlist, re-evaluating every finding it covered or now covers.",
			Grants: []Grant{
				onTable("GetItem PutItem UpdateItem DeleteItem BatchGetItem Query", store.KeyAllow, store.KeyGroup, store.KeyScan, store.KeyPR, store.KeyCounter, store.KeyAudit, store.KeyPolicy, store.KeyWork, store.KeyEvent),
				onIndex("GSI1", "Query", store.KeyFinding),
			},
			API: func(d Deps) api.Handler {
				return api.UpdateAllowlist(d.Store(), usecase.Runner(d.Store(), d.Now, d.WorkQueue()), d.Now, d.Log()).Handle
			}},
		{Name: "create-sarif-upload",
			Method: "POST", Path: "/api/pr/scan/sarif/uploads",
			Description: "create a large SARIF upload and presign the PUT of its object.",
			Grants: []Grant{
				onTable("UpdateItem PutItem", store.KeyUpload, store.KeyCounter),
				on(uploadObjects, "s3:PutObject").because("The presigned URL acts with this function's permissions."),
			},
			API: func(d Deps) api.Handler {
				return api.CreateSARIFUpload(d.Store(), d.Bucket(), d.Now, d.Log()).Handle
			}},
		{Name: "get-sarif-upload",
			Method: "GET", Path: "/api/pr/scan/sarif/uploads/{upload_id}",
			Description: "the status of a large SARIF upload.",
			Grants: []Grant{
				onTable("GetItem", store.KeyUpload),
			},
			API: func(d Deps) api.Handler { return api.GetSARIFUpload(d.Store(), d.Log()).Handle }},
		{Name: "ingest-sarif-upload",
			Description: "Records a SARIF log uploaded to the uploads bucket (S3 ObjectCreated) and sets its upload's status.",
			Checkov: []Skip{
				{"CKV_AWS_117", "calls AWS services only, over TLS with IAM: a VPC would add NAT or endpoints and cold-start time, not protection"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
# Up to 500,000 results in bounded memory (peak under 256 MiB): 1024 MB
# for its share of CPU, Lambda's longest timeout for a table on demand
# taking the writes from cold (docs/BENCHMARKS.md, docs/DECISIONS.md).
Timeout: 900
# Caps the ingests at once (IngestConcurrency); an event that fails after
# Lambda's retries is kept in the dead-letter queue, from which it can be
# sent to the function again (a redelivered event records nothing twice).
ReservedConcurrentExecutions: !If [ReserveConcurrency, !Ref IngestConcurrency, !Ref AWS::NoValue]
DeadLetterQueue: {Type: SQS, TargetArn: !GetAtt IngestSarifUploadDeadLetters.Arn}
Events:
  Uploaded:
    Type: S3
    Properties:
      Bucket: !Ref UploadsBucket
      Events: s3:ObjectCreated:*
      Filter: {S3Key: {Rules: [{Name: prefix, Value: uploads/}]}}`,
			MemorySize: 1024,
			Grants: []Grant{
				onTable("BatchGetItem", writeCheckKeys()...).because("The write-time check of the upload's creator: the token it was created with and its user, in one BatchGetItem."),
				onTable("GetItem BatchGetItem Query PutItem UpdateItem BatchWriteItem", append([]string{store.KeyUpload, store.KeyOnce}, recordingKeys()...)...),
				on(uploadObjects, "s3:GetObject", "s3:DeleteObject"),
			},
			S3: func(d Deps) trigger.S3Handler {
				return trigger.NewIngest(d.Store(), d.Bucket(), d.Config().UploadMaxBytes, d.Now, d.Log())
			}},
		{Name: "create-token",
			Method: "POST", Path: "/api/auth/tokens",
			Description: "create a personal token (shown once).",
			Grants: []Grant{
				onTable("GetItem UpdateItem PutItem", store.KeyUser, store.KeyToken, store.KeyTokenID, store.KeyCounter, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.CreateToken(d.Store(), emailfold.Fold, d.Now, d.Log()).Handle }},
		{Name: "revoke-token",
			Method: "DELETE", Path: "/api/auth/tokens/{token_id}",
			Description: "revoke a token (its owner or an admin).",
			Grants: []Grant{
				onTable("GetItem UpdateItem PutItem", store.KeyUser, store.KeyToken, store.KeyTokenID, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.RevokeToken(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "logout",
			Method: "DELETE", Path: "/api/auth/token",
			Description: "revoke the token the request carries.",
			Grants: []Grant{
				onTable("GetItem UpdateItem PutItem", store.KeyUser, store.KeyToken, store.KeyTokenID, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.Logout(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "list-tokens",
			Method: "GET", Path: "/api/auth/tokens",
			Description: "the caller's (or, for an admin, a user's) live tokens without secrets.",
			Grants: []Grant{
				onIndex("GSI1", "Query", store.KeyUserTokens),
				onTable("BatchGetItem", store.KeyToken),
			},
			API: func(d Deps) api.Handler { return api.ListTokens(d.Store(), d.Cursors(), d.Now, d.Log()).Handle }},
		{Name: "list-audit",
			Method: "GET", Path: "/api/audit",
			Description: "the audit log (admins).",
			Grants: []Grant{
				onTable("Query", store.KeyAudit, store.KeyAuditLogin),
				onIndex("GSI1", "Query", store.KeyAuditTarget),
				onIndex("GSI3", "Query", store.KeyAuditActor),
				onTable("BatchGetItem", store.KeyAudit, store.KeyAuditLogin),
			},
			API: func(d Deps) api.Handler { return api.ListAudit(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "expire-allowlists",
			Description: "Every minute, applies the expiries of allowlists whose expires_at has passed (re-evaluating what they covered) and resumes durable work whose lease has run out.",
			Checkov: []Skip{
				{"CKV_AWS_117", "calls AWS services only, over TLS with IAM: a VPC would add NAT or endpoints and cold-start time, not protection"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
Timeout: 300
# One run at a time; a run that fails after Lambda's retries is kept in
# its dead-letter queue (the next minute's run applies the same expiries).
ReservedConcurrentExecutions: !If [ReserveConcurrency, 1, !Ref AWS::NoValue]
DeadLetterQueue: {Type: SQS, TargetArn: !GetAtt ExpireAllowlistsDeadLetters.Arn}
Events:
  EveryMinute: {Type: Schedule, Properties: {Schedule: rate(1 minute)}}`,
			Grants: []Grant{
				onTable("GetItem PutItem UpdateItem BatchGetItem Query", store.KeyAllow, store.KeyGroup, store.KeyScan, store.KeyPR, store.KeyPRID, store.KeyBranch, store.KeyAudit, store.KeyPolicy, store.KeyWork, store.KeyCounter, store.KeyEvent),
				onIndex("GSI1", "Query", store.KeyFinding, store.KeyExpiry, store.KeyWorkQueue),
			},
			Schedule: func(d Deps) trigger.ScheduleHandler {
				return trigger.ExpireAllowlists(d.Store(), usecase.Runner(d.Store(), d.Now, d.WorkQueue()), d.Now, d.Log())
			}},
		{Name: "list-findings",
			Method: "GET", Path: "/api/pr/scan/{pr_scan_id}/findings",
			Description: "a scan's findings (one Query a page, and the scan on the first).",
			Grants: []Grant{
				onTable("Query BatchGetItem", store.KeyScan),
			},
			API: func(d Deps) api.Handler { return api.ListFindings(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-pr",
			Method: "GET", Path: "/api/pr/{pr_id}",
			Description: "a pull request.",
			Grants: []Grant{
				onTable("GetItem", store.KeyPRID, store.KeyPR),
			},
			API: func(d Deps) api.Handler { return api.GetPR(d.Store(), d.Log()).Handle }},
		{Name: "list-pr-scans",
			Method: "GET", Path: "/api/pr/{pr_id}/scans",
			Description: "a pull request's scans, newest first.",
			Grants: []Grant{
				onIndex("GSI3", "Query", store.KeyPRScans),
				onTable("BatchGetItem", store.KeyPRID, store.KeyPR),
			},
			API: func(d Deps) api.Handler { return api.ListPRScans(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "list-prs",
			Method: "GET", Path: "/api/pr",
			Description: "pull requests by last scan, newest first; with number, one PR by its number (one GetItem).",
			Grants: []Grant{
				onTable("GetItem", store.KeyPR),
				onIndex("GSI2", "Query", store.KeyPRs),
				onIndex("GSI3", "Query", store.KeyRepoPRs),
			},
			API: func(d Deps) api.Handler { return api.ListPRs(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-allowlist",
			Method: "GET", Path: "/api/whitelist/{whitelist_id}",
			Description: "an allowlist and its comments (one Query).",
			Grants: []Grant{
				onTable("Query", store.KeyAllow),
			},
			API: func(d Deps) api.Handler { return api.GetAllowlist(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "list-allowlists",
			Method: "GET", Path: "/api/whitelist",
			Description: "allowlists, newest first.",
			Grants: []Grant{
				onIndex("GSI2", "Query", store.KeyAllows),
				onIndex("GSI3", "Query", store.KeyAllowName),
			},
			API: func(d Deps) api.Handler {
				return api.ListAllowlists(d.Store(), d.Cursors(), d.Now, d.Log()).Handle
			}},
		{Name: "get-user",
			Method: "GET", Path: "/api/users/{user_id}",
			Description: "a user (admins; any role for itself).",
			Grants: []Grant{
				onTable("GetItem", store.KeyUser),
			},
			API: func(d Deps) api.Handler { return api.GetUser(d.Store(), d.Log()).Handle }},
		{Name: "get-me",
			Method: "GET", Path: "/api/users/me",
			Description: "the caller's user.",
			Grants: []Grant{
				onTable("GetItem", store.KeyUser),
			},
			API: func(d Deps) api.Handler { return api.GetMe(d.Store(), d.Log()).Handle }},
		{Name: "list-users",
			Method: "GET", Path: "/api/users",
			Description: "users by id (admins).",
			Grants: []Grant{
				onIndex("GSI2", "Query", store.KeyUsers),
			},
			API: func(d Deps) api.Handler { return api.ListUsers(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "publish-dashboard",
			Description: "The Dashboard custom resource; writes the dashboard's files and config.json into its bucket at each deployment, and empties the bucket when the stack is deleted.",
			Checkov: []Skip{
				{"CKV_AWS_116", "invoked by CloudFormation, which waits for its answer: a failure is answered FAILED to the stack (cfn.LambdaWrap), not queued"},
				{"CKV_AWS_115", "runs once a deployment; reserving concurrency for it would take from the account's pool for nothing"},
				{"CKV_AWS_117", "calls only S3, over TLS with IAM: a VPC would add NAT or endpoints, not protection"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
Timeout: 120
# Its version changes with its code, which embeds the files, so a
# deployment with new files updates the Dashboard resource.
AutoPublishAlias: live`,
			Grants: []Grant{
				on(`!Sub "${DashboardBucket.Arn}/*"`, "s3:PutObject", "s3:DeleteObject"),
				on("!GetAtt DashboardBucket.Arn", "s3:ListBucket"),
			},
			CustomResource: func(d Deps) trigger.CustomResourceHandler {
				return trigger.PublishDashboard(dashboard.Publisher{S3: d.S3()}, d.Log())
			}},
		{Name: "get-pr-gate",
			Method: "GET", Path: "/api/pr/{pr_id}/gate",
			Description: "a pull request's gate (its stored decision).",
			Grants: []Grant{
				onTable("GetItem", store.KeyPRID, store.KeyPR),
			},
			API: func(d Deps) api.Handler { return api.GetPRGate(d.Store(), d.Log()).Handle }},
		{Name: "get-gate-policy",
			Method: "GET", Path: "/api/gate/policy",
			Description: "the global gate policy.",
			Grants: []Grant{
				onTable("GetItem", store.KeyPolicy),
			},
			API: func(d Deps) api.Handler { return api.GetGatePolicy(d.Store(), d.Log()).Handle }},
		{Name: "update-gate-policy",
			Method: "PUT", Path: "/api/gate/policy",
			Description: "the global gate policy; re-judges every pull request's gate (durable work, resumed by the scheduler).",
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query PutItem UpdateItem", store.KeyPolicy, store.KeyWork, store.KeyCounter, store.KeyAudit, store.KeyPRID, store.KeyPR, store.KeyScan, store.KeyEvent),
			},
			API: func(d Deps) api.Handler {
				return api.UpdateGatePolicy(d.Store(), usecase.Runner(d.Store(), d.Now, nil), d.Now, d.Log()).Handle
			}},
		{Name: "get-repo-gate-policy",
			Method: "GET", Path: "/api/gate/policy/repos/{repo_id}",
			Description: "a repository's gate policy.",
			Grants: []Grant{
				onTable("GetItem", store.KeyPolicy),
			},
			API: func(d Deps) api.Handler { return api.GetRepoGatePolicy(d.Store(), d.Log()).Handle }},
		{Name: "update-repo-gate-policy",
			Method: "PUT", Path: "/api/gate/policy/repos/{repo_id}",
			Description: "a repository's gate policy; re-judges every pull request's gate.",
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query PutItem UpdateItem", store.KeyPolicy, store.KeyWork, store.KeyCounter, store.KeyAudit, store.KeyPRID, store.KeyPR, store.KeyScan, store.KeyEvent),
			},
			API: func(d Deps) api.Handler {
				return api.UpdateRepoGatePolicy(d.Store(), usecase.Runner(d.Store(), d.Now, nil), d.Now, d.Log()).Handle
			}},
		{Name: "delete-repo-gate-policy",
			Method: "DELETE", Path: "/api/gate/policy/repos/{repo_id}",
			Description: "a repository returns to the global gate policy; re-judges every pull request's gate.",
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query PutItem UpdateItem DeleteItem", store.KeyPolicy, store.KeyWork, store.KeyCounter, store.KeyAudit, store.KeyPRID, store.KeyPR, store.KeyScan, store.KeyEvent),
			},
			API: func(d Deps) api.Handler {
				return api.DeleteRepoGatePolicy(d.Store(), usecase.Runner(d.Store(), d.Now, nil), d.Now, d.Log()).Handle
			}},
		{Name: "run-work",
			Description: "Runs the steps of large durable work from the work queue (an allowlist re-evaluation, a range of a group's findings a step), and completes the work after its last step.",
			Checkov: []Skip{
				{"CKV_AWS_116", "invoked by an SQS event source: a message that fails goes to the queue's own dead-letter queue (WorkDeadLetters, with an alarm)"},
				{"CKV_AWS_115", "its concurrency is capped by the event source's ScalingConfig (WorkConcurrency), which leaves the account's pool shared"},
				{"CKV_AWS_117", "calls AWS services only, over TLS with IAM: a VPC would add NAT or endpoints and cold-start time, not protection"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
# A step reads at most 1,000 findings at once: its memory does not grow
# with the group (docs/BENCHMARKS.md).
Timeout: 300
Events:
  Steps:
    Type: SQS
    Properties:
      Queue: !GetAtt WorkQueue.Arn
      BatchSize: 1
      FunctionResponseTypes: [ReportBatchItemFailures]
      ScalingConfig: {MaximumConcurrency: !Ref WorkConcurrency}`,
			MemorySize: 256,
			Grants: []Grant{
				onTable("GetItem PutItem UpdateItem BatchGetItem Query", store.KeyWork, store.KeyGroup, store.KeyScan, store.KeyPR, store.KeyBranch, store.KeyCounter, store.KeyPolicy, store.KeyEvent),
				onIndex("GSI1", "Query", store.KeyFinding),
			},
			Queue: func(d Deps) trigger.QueueHandler {
				return trigger.RunWork(usecase.Runner(d.Store(), d.Now, nil), d.Log())
			}},
		{Name: "get-reevaluation",
			Method: "GET", Path: "/api/reevaluations/{reevaluation_id}",
			Description: "the re-evaluation an allowlist change or expiry left (its progress, and its exact counts once complete).",
			Grants: []Grant{
				onTable("GetItem Query", store.KeyWork),
			},
			API: func(d Deps) api.Handler { return api.GetReevaluation(d.Store(), d.Log()).Handle }},
		{Name: "get-branch",
			Method: "GET", Path: "/api/branches/{branch_id}",
			Description: "a branch and its newest analysis of each (scan type, category).",
			Grants: []Grant{
				onTable("GetItem BatchGetItem", store.KeyBranchID, store.KeyBranch, store.KeyScan),
			},
			API: func(d Deps) api.Handler { return api.GetBranch(d.Store(), d.Log()).Handle }},
		{Name: "list-branches",
			Method: "GET", Path: "/api/branches",
			Description: "a repository's branches by name; with name, one branch (one GetItem).",
			Grants: []Grant{
				onTable("GetItem Query BatchGetItem", store.KeyBranch, store.KeyScan),
			},
			API: func(d Deps) api.Handler { return api.ListBranches(d.Store(), d.Cursors(), d.Log()).Handle }},
		{Name: "get-pr-sarif",
			Method: "GET", Path: "/api/pr/{pr_id}/sarif",
			Description: "a SARIF 2.1.0 log of a pull request's newest scans (larger logs through the uploads bucket).",
			Grants: []Grant{
				onTable("GetItem BatchGetItem Query", store.KeyPRID, store.KeyPR, store.KeyScan, store.KeyAllow),
				on(sarifObjects, "s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload").because("A log too large to answer is written under sarif/ (its multipart upload aborted when the log fails midway) and read through a presigned GET, which acts with this function's permissions."),
			},
			API: func(d Deps) api.Handler {
				return api.GetPRSARIF(d.Store(), d.Bucket(), d.Config().SARIFInlineMax, d.Log()).Handle
			}},
		{Name: "list-pr-absent",
			Method: "GET", Path: "/api/pr/{pr_id}/absent",
			Description: "the baselines' findings a pull request fixes.",
			Grants: []Grant{
				onTable("GetItem Query", store.KeyPRID, store.KeyPR, store.KeyScan),
			},
			API: func(d Deps) api.Handler { return api.ListAbsent(d.Store(), d.Cursors(), d.Log()).Handle }},
	}, eventOperations()...)
}

// eventOperations are the functions of events: the webhook and
// integration routes, the dispatcher and the deliverer.
func eventOperations() []Operation {
	return []Operation{
		{Name: "create-webhook",
			Method: "POST", Path: "/api/webhooks",
			Description: "subscribe a URL to events (its signing secret shown once).",
			Grants: []Grant{
				onTable("PutItem UpdateItem", store.KeyWebhooks, store.KeyCounter, store.KeyAudit),
			},
			API: func(d Deps) api.Handler {
				return api.CreateWebhook(d.Store(), d.Box(), d.Egress(), d.Now, d.Log()).Handle
			}},
		{Name: "list-webhooks",
			Method: "GET", Path: "/api/webhooks",
			Description: "the webhook subscriptions (admins).",
			Grants: []Grant{
				onTable("Query", store.KeyWebhooks),
			},
			API: func(d Deps) api.Handler { return api.ListWebhooks(d.Store(), d.Cursors(), d.Now, d.Log()).Handle }},
		{Name: "get-webhook",
			Method: "GET", Path: "/api/webhooks/{webhook_id}",
			Description: "a webhook subscription (admins).",
			Grants: []Grant{
				onTable("GetItem", store.KeyWebhooks),
			},
			API: func(d Deps) api.Handler { return api.GetWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "update-webhook",
			Method: "PATCH", Path: "/api/webhooks/{webhook_id}",
			Description: "change a webhook subscription.",
			Grants: []Grant{
				onTable("GetItem PutItem", store.KeyWebhooks, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.UpdateWebhook(d.Store(), d.Egress(), d.Now, d.Log()).Handle }},
		{Name: "delete-webhook",
			Method: "DELETE", Path: "/api/webhooks/{webhook_id}",
			Description: "delete a webhook subscription.",
			Grants: []Grant{
				onTable("GetItem DeleteItem UpdateItem PutItem", store.KeyWebhooks, store.KeyCounter, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.DeleteWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "test-webhook",
			Method: "POST", Path: "/api/webhooks/{webhook_id}/test",
			Description: "a webhook.test event for one subscription.",
			Grants: []Grant{
				onTable("GetItem ConditionCheckItem PutItem", store.KeyWebhooks, store.KeyEvent, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.TestWebhook(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "rotate-webhook-secret",
			Method: "POST", Path: "/api/webhooks/{webhook_id}/rotate-secret",
			Description: "a new signing secret (the previous one signs for 24 hours more).",
			Grants: []Grant{
				onTable("GetItem PutItem", store.KeyWebhooks, store.KeyAudit),
			},
			API: func(d Deps) api.Handler {
				return api.RotateWebhookSecret(d.Store(), d.Box(), d.Now, d.Log()).Handle
			}},
		{Name: "list-webhook-deliveries",
			Method: "GET", Path: "/api/webhooks/{webhook_id}/deliveries",
			Description: "a subscription's deliveries, newest first.",
			Grants: []Grant{
				onTable("GetItem", store.KeyWebhooks),
				onTable("Query", store.KeyWebhook),
			},
			API: func(d Deps) api.Handler {
				return api.ListWebhookDeliveries(d.Store(), d.Cursors(), d.Log()).Handle
			}},
		{Name: "redeliver-webhook-delivery",
			Method: "POST", Path: "/api/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver",
			Description: "deliver an event again.",
			Grants: []Grant{
				onTable("GetItem UpdateItem PutItem", store.KeyWebhook, store.KeyAudit),
				onTable("ConditionCheckItem", store.KeyWebhooks),
				on("!GetAtt DeliveryRetryQueue.Arn", "sqs:SendMessage"),
			},
			API: func(d Deps) api.Handler {
				return api.RedeliverWebhookDelivery(d.Store(), d.Queues(), d.Now, d.Log()).Handle
			}},
		{Name: "put-integration",
			Method: "PUT", Path: "/api/integrations/{vc_id}",
			Description: "where and how commit statuses are posted (the token sealed, never shown).",
			Grants: []Grant{
				onTable("GetItem PutItem", store.KeyIntegration, store.KeyAudit),
			},
			API: func(d Deps) api.Handler {
				return api.PutIntegration(d.Store(), d.Box(), d.Egress().WithPrivate(d.Config().PrivateIntegrations), d.Now, d.Log()).Handle
			}},
		{Name: "get-integration",
			Method: "GET", Path: "/api/integrations/{vc_id}",
			Description: "an integration without its token.",
			Grants: []Grant{
				onTable("GetItem", store.KeyIntegration),
			},
			API: func(d Deps) api.Handler { return api.GetIntegration(d.Store(), d.Log()).Handle }},
		{Name: "delete-integration",
			Method: "DELETE", Path: "/api/integrations/{vc_id}",
			Description: "commit statuses of that vc_id no longer posted.",
			Grants: []Grant{
				onTable("GetItem DeleteItem PutItem", store.KeyIntegration, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.DeleteIntegration(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "put-oidc-trust",
			Method: "PUT", Path: "/api/auth/oidc/trust/{name}",
			Description: "which CI id tokens may be exchanged for scan tokens.",
			Grants: []Grant{
				onTable("GetItem PutItem", store.KeyOIDCTrust, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.PutOIDCTrust(d.Store(), d.Egress(), d.Now, d.Log()).Handle }},
		{Name: "get-oidc-trust",
			Method: "GET", Path: "/api/auth/oidc/trust/{name}",
			Description: "a trust of CI id tokens.",
			Grants: []Grant{
				onTable("GetItem", store.KeyOIDCTrust),
			},
			API: func(d Deps) api.Handler { return api.GetOIDCTrust(d.Store(), d.Log()).Handle }},
		{Name: "delete-oidc-trust",
			Method: "DELETE", Path: "/api/auth/oidc/trust/{name}",
			Description: "a CI's id tokens no longer exchanged.",
			Grants: []Grant{
				onTable("GetItem DeleteItem PutItem", store.KeyOIDCTrust, store.KeyAudit),
			},
			API: func(d Deps) api.Handler { return api.DeleteOIDCTrust(d.Store(), d.Now, d.Log()).Handle }},
		{Name: "exchange-oidc-token",
			Method: "POST", Path: "/api/auth/oidc/token",
			Public:      true,
			Description: "a CI job's id token exchanged for a scan token of its repository.",
			Grants: []Grant{
				onTable("Query", store.KeyOIDCTrust).because("The trusts of the token's issuer (one Query), the owner of the token issued, its id, and the token with its audit entry (or the refusal's, in the login partition)."),
				onTable("GetItem", store.KeyUser),
				onTable("UpdateItem", store.KeyCounter),
				onTable("PutItem", store.KeyToken, store.KeyTokenID, store.KeyAudit, store.KeyAuditLogin),
			},
			API: func(d Deps) api.Handler {
				return api.ExchangeOIDCToken(ciauth.Exchange{Store: d.Store(), Verifier: ciauth.NewVerifier(d.Egress().Client(ciauth.FetchTimeout), d.Now), Now: d.Now}, d.Log()).Handle
			}},
		{Name: "dispatch-events",
			Description: "Invoked by the table's stream for event items; puts each event on the bus, creates and queues its deliveries.",
			Checkov: []Skip{
				{"CKV_AWS_116", "invoked synchronously by its event source mapping; the mapping's on-failure destination (DispatchFailures) keeps what it gives up on"},
				{"CKV_AWS_115", "one invocation at a time per stream shard by construction (the table's stream, parallelization factor 1)"},
				{"CKV_AWS_117", "calls AWS services only, over TLS with IAM: a VPC would add NAT or endpoints and cold-start time, not protection"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
Timeout: 60
Events:
  Outbox:
    Type: DynamoDB
    Properties:
      Stream: !GetAtt Table.StreamArn
      StartingPosition: TRIM_HORIZON
      BatchSize: 100
      MaximumBatchingWindowInSeconds: 0
      BisectBatchOnFunctionError: true
      MaximumRetryAttempts: 100
      FunctionResponseTypes: [ReportBatchItemFailures]
      DestinationConfig: {OnFailure: {Type: SQS, Destination: !GetAtt DispatchFailures.Arn}}
      FilterCriteria:
        Filters:
          - Pattern: '{"eventName":["INSERT"],"dynamodb":{"Keys":{"PK":{"S":[{"prefix":"EVENT#"}]}}}}'`,
			Grants: []Grant{
				onTable("BatchGetItem UpdateItem", store.KeyEvent),
				onTable("Query", store.KeyWebhooks),
				onTable("GetItem PutItem", store.KeyWebhook, store.KeyIntegration),
				on("[!GetAtt DeliveryQueue.Arn, !GetAtt DeliveryRetryQueue.Arn]", "sqs:SendMessage"),
				on("!GetAtt EventBus.Arn", "events:PutEvents"),
			},
			Stream: func(d Deps) trigger.StreamHandler {
				return dispatch.NewDispatcher(d.Store(), d.Bus(), d.Queues(), d.Now, d.Log())
			}},
		{Name: "deliver-events",
			Description: "Invoked by the delivery queues; attempts each webhook delivery and commit status, records it, schedules the next.",
			Env: map[string]string{
				"DEAD_LETTER_QUEUE_URL":        "!Ref DeliveryDeadLetterQueue",
				"INTEGRATIONS_PRIVATE_NETWORK": "!Ref IntegrationsPrivateNetwork",
				"DASHBOARD_URL":                "!Ref DashboardUrl",
			},
			Checkov: []Skip{
				{"CKV_AWS_116", "invoked synchronously by its queues' event source mappings; the queues' redrive policy keeps what keeps failing (DeliveryDeadLetterQueue)"},
				{"CKV_AWS_115", "its concurrency is capped per queue by the event source mappings' MaximumConcurrency (DeliveryConcurrency, RetryConcurrency), which reserves nothing from the account's pool"},
				{"CKV_AWS_117", "calls receivers on the internet and AWS services over TLS with IAM: a VPC would add NAT and cold-start time; outbound addresses are checked at each connection (docs/SECURITY.md)"},
				{"CKV_AWS_173", "its environment holds no secret and is encrypted with Lambda's AWS managed key"},
			},
			Properties: `
Timeout: 60 # a batch's attempts run at once, each at most 10 s
Events:
  FirstAttempts:
    Type: SQS
    Properties:
      Queue: !GetAtt DeliveryQueue.Arn
      BatchSize: 10
      FunctionResponseTypes: [ReportBatchItemFailures]
      ScalingConfig: {MaximumConcurrency: !Ref DeliveryConcurrency}
  Retries:
    Type: SQS
    Properties:
      Queue: !GetAtt DeliveryRetryQueue.Arn
      BatchSize: 10
      FunctionResponseTypes: [ReportBatchItemFailures]
      ScalingConfig: {MaximumConcurrency: !Ref RetryConcurrency}`,
			Grants: []Grant{
				onTable("BatchGetItem", store.KeyWebhook, store.KeyIntegration, store.KeyEvent, store.KeyWebhooks),
				onTable("GetItem UpdateItem PutItem", store.KeyWebhook, store.KeyIntegration, store.KeyWebhooks, store.KeyStatus, store.KeyAudit),
				onTable("Query", store.KeyScan).because("A gate's blocking findings, for check-run annotations and merge-request notes."),
				on("[!GetAtt DeliveryRetryQueue.Arn, !GetAtt DeliveryDeadLetterQueue.Arn]", "sqs:SendMessage"),
				on("!GetAtt DeliveryRetryQueue.Arn", "sqs:ChangeMessageVisibility"),
			},
			Queue: func(d Deps) trigger.QueueHandler {
				return delivery.NewDeliverer(d.Store(), d.Queues(), d.Box(), d.Egress(), d.Config(), d.Now, d.Log())
			}},
	}
}
