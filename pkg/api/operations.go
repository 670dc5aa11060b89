package api

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/config"
)

// AuthorizerHandler is the signature of the TOKEN authorizer.
type AuthorizerHandler func(context.Context, events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// Store is every store method a handler uses: the union of the handlers'
// own small interfaces, which pkg/store's Store satisfies.
type Store interface {
	UserStore
	ScanStore
	AllowlistStore
	PRReader
	AllowlistReader
	UserReader
	auth.LoginStore
	auth.TokenStore
	UploadStore
	IngestStore
	TokenStore
	ExpiryStore
	AuditReader
}

// Passwords hashes and checks passwords (pkg/auth/password.Argon2id).
type Passwords interface {
	auth.PasswordHasher
	auth.PasswordChecker
}

// Deps is what a function's handler is built from: what its main reads and
// builds once, at init.
type Deps struct {
	Store  Store
	Log    *slog.Logger
	Now    func() time.Time
	Config config.Config
	// Passwords is set only for the functions that hash or check a
	// password, so that no other function links argon2.
	Passwords Passwords
	// Bucket is set only for the functions of large uploads, so that no
	// other function links the S3 client.
	Bucket Bucket
	// Fold (pkg/fold.Fold) is set only for the functions that store an
	// e-mail address, so that no other function links x/text's tables.
	Fold Folder
	// Dashboard is set only for the function that publishes the
	// dashboard, so that no other function links its files.
	Dashboard Dashboard
}

// Operation is one Lambda function of template.yaml.
type Operation struct {
	// Name is the function's directory under functions/; its logical id in
	// template.yaml is LogicalID(Name).
	Name string
	// Exactly one of these builds its handler, by what invokes it.
	API        func(Deps) Handler           // API Gateway, REST proxy
	Authorizer func(Deps) AuthorizerHandler // API Gateway, TOKEN authorizer
	S3         func(Deps) S3Handler         // S3 events (ObjectCreated)
	Schedule   func(Deps) ScheduleHandler   // an EventBridge schedule
	// CustomResource: a CloudFormation custom resource of the template.
	CustomResource func(Deps) CustomResourceHandler
}

// ScheduleHandler is the signature of a function an EventBridge schedule
// invokes.
type ScheduleHandler func(context.Context, events.EventBridgeEvent) error

// Handler builds the operation's handler in the form lambda.Start takes
// it: a Handler, an AuthorizerHandler, or (for the kinds of later
// triggers) any other handler signature aws-lambda-go accepts.
func (o Operation) Handler(d Deps) any {
	switch {
	case o.API != nil:
		return o.API(d)
	case o.Authorizer != nil:
		return o.Authorizer(d)
	case o.S3 != nil:
		return o.S3(d)
	case o.Schedule != nil:
		return o.Schedule(d)
	case o.CustomResource != nil:
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

// Operations is the table of every function of the service. The local
// stack, the tests and the checks of template.yaml, docs/openapi.yaml and
// functions/ derive from it. It is a function rather than a variable so
// that a Lambda, whose main calls only its own constructor, links none of
// the others.
func Operations() []Operation {
	return []Operation{
		{Name: "authorizer", Authorizer: NewAuthorizer},
		{Name: "login", API: NewLogin},
		{Name: "create-user", API: NewCreateUser},
		{Name: "update-user", API: NewUpdateUser},
		{Name: "record-scan", API: NewRecordScan},
		{Name: "record-sarif", API: NewRecordSARIF},
		{Name: "get-scan", API: NewGetScan},
		{Name: "create-allowlist", API: NewCreateAllowlist},
		{Name: "update-allowlist", API: NewUpdateAllowlist},
		{Name: "create-sarif-upload", API: NewCreateSarifUpload},
		{Name: "get-sarif-upload", API: NewGetSarifUpload},
		{Name: "ingest-sarif-upload", S3: NewIngestSarifUpload},
		{Name: "create-token", API: NewCreateToken},
		{Name: "revoke-token", API: NewRevokeToken},
		{Name: "logout", API: NewLogout},
		{Name: "list-tokens", API: NewListTokens},
		{Name: "list-audit", API: NewListAudit},
		{Name: "expire-allowlists", Schedule: NewExpireAllowlists},
		{Name: "list-findings", API: NewListFindings},
		{Name: "get-pr", API: NewGetPR},
		{Name: "list-pr-scans", API: NewListPRScans},
		{Name: "list-prs", API: NewListPRs},
		{Name: "get-allowlist", API: NewGetAllowlist},
		{Name: "list-allowlists", API: NewListAllowlists},
		{Name: "get-user", API: NewGetUser},
		{Name: "get-me", API: NewGetMe},
		{Name: "list-users", API: NewListUsers},
		{Name: "publish-dashboard", CustomResource: NewPublishDashboard},
	}
}

// NewAuthorizer builds the TOKEN authorizer.
func NewAuthorizer(d Deps) AuthorizerHandler {
	return auth.Authorizer{Store: d.Store, Now: d.Now, Log: d.Log}.Handle
}

// NewLogin builds POST /auth/token; it needs d.Passwords.
func NewLogin(d Deps) Handler {
	return Login(auth.Login{Store: d.Store, Passwords: d.Passwords, TokenTTL: d.Config.TokenTTL, Now: d.Now}, d.Log).Handle
}

// NewCreateUser builds POST /users; it needs d.Passwords.
func NewCreateUser(d Deps) Handler {
	return CreateUser(d.Store, d.Passwords.Hash, d.Fold, d.Now, d.Log).Handle
}

// NewUpdateUser builds PUT /users/{user_id}.
func NewUpdateUser(d Deps) Handler { return UpdateUser(d.Store, d.Fold, d.Now, d.Log).Handle }

// NewRecordScan builds POST /pr/scan.
func NewRecordScan(d Deps) Handler { return RecordScan(d.Store, d.Now, d.Log).Handle }

// NewRecordSARIF builds POST /pr/scan/sarif.
func NewRecordSARIF(d Deps) Handler { return RecordSARIF(d.Store, d.Now, d.Log).Handle }

// NewGetScan builds GET /pr/scan/{pr_scan_id}.
func NewGetScan(d Deps) Handler { return GetScan(d.Store, d.Log).Handle }

// NewCreateAllowlist builds POST /whitelist.
func NewCreateAllowlist(d Deps) Handler { return CreateAllowlist(d.Store, d.Now, d.Log).Handle }

// NewUpdateAllowlist builds PUT /whitelist/{whitelist_id}.
func NewUpdateAllowlist(d Deps) Handler { return UpdateAllowlist(d.Store, d.Now, d.Log).Handle }

// NewCreateSarifUpload builds POST /pr/scan/sarif/uploads; it needs d.Bucket.
func NewCreateSarifUpload(d Deps) Handler {
	return CreateSARIFUpload(d.Store, d.Bucket, d.Now, d.Log).Handle
}

// NewGetSarifUpload builds GET /pr/scan/sarif/uploads/{upload_id}.
func NewGetSarifUpload(d Deps) Handler { return GetSARIFUpload(d.Store, d.Log).Handle }

// NewCreateToken builds POST /auth/tokens.
func NewCreateToken(d Deps) Handler { return CreateToken(d.Store, d.Now, d.Log).Handle }

// NewRevokeToken builds DELETE /auth/tokens/{token_id}.
func NewRevokeToken(d Deps) Handler { return RevokeToken(d.Store, d.Now, d.Log).Handle }

// NewLogout builds DELETE /auth/token.
func NewLogout(d Deps) Handler { return Logout(d.Store, d.Now, d.Log).Handle }

// NewExpireAllowlists builds the scheduled function that applies expiries.
func NewExpireAllowlists(d Deps) ScheduleHandler { return ExpireAllowlists(d.Store, d.Now, d.Log) }

// The read side (section 6). A listing seals its cursors with
// d.Config.CursorKey; its main refuses to start without one.

// NewListFindings builds GET /pr/scan/{pr_scan_id}/findings.
func NewListFindings(d Deps) Handler {
	return ListFindings(d.Store, newPager(d.Config), d.Log).Handle
}

// NewGetPR builds GET /pr/{pr_id}.
func NewGetPR(d Deps) Handler { return GetPR(d.Store, d.Log).Handle }

// NewListPRScans builds GET /pr/{pr_id}/scans.
func NewListPRScans(d Deps) Handler {
	return ListPRScans(d.Store, newPager(d.Config), d.Log).Handle
}

// NewListPRs builds GET /pr.
func NewListPRs(d Deps) Handler { return ListPRs(d.Store, newPager(d.Config), d.Log).Handle }

// NewGetAllowlist builds GET /whitelist/{whitelist_id}.
func NewGetAllowlist(d Deps) Handler { return GetAllowlist(d.Store, d.Now, d.Log).Handle }

// NewListAllowlists builds GET /whitelist.
func NewListAllowlists(d Deps) Handler {
	return ListAllowlists(d.Store, newPager(d.Config), d.Now, d.Log).Handle
}

// NewGetUser builds GET /users/{user_id}.
func NewGetUser(d Deps) Handler { return GetUser(d.Store, d.Log).Handle }

// NewGetMe builds GET /users/me.
func NewGetMe(d Deps) Handler { return GetMe(d.Store, d.Log).Handle }

// NewListUsers builds GET /users.
func NewListUsers(d Deps) Handler { return ListUsers(d.Store, newPager(d.Config), d.Log).Handle }

// NewListTokens builds GET /auth/tokens.
func NewListTokens(d Deps) Handler {
	return ListTokens(d.Store, newPager(d.Config), d.Now, d.Log).Handle
}

// NewListAudit builds GET /audit.
func NewListAudit(d Deps) Handler { return ListAudit(d.Store, newPager(d.Config), d.Log).Handle }
