package localstack

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth"
	passwordpkg "github.com/scangate/scangate/internal/auth/password"
	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/store"
)

// Options configure a local stack.
type Options struct {
	Template string           // path of template.yaml
	Table    string           // table name
	Endpoint string           // DynamoDB endpoint; empty starts the embedded server
	Client   *dynamodb.Client // a client to use instead of one built for Endpoint
	// StoreFor, when set, gives each function its own store, by logical
	// id; its client takes stream among its options, so that the table's
	// stream (when the template has one) sees its writes.
	StoreFor      func(function string, stream func(*dynamodb.Options)) *store.Store
	AdminUsername string        // first admin's username
	AdminPassword string        // first admin's password; generated when empty
	PasswordFile  string        // where a generated password is written (0600); empty: nowhere
	AuthorizerTTL time.Duration // authorizer cache TTL; negative: the template's
	TokenTTL      time.Duration // lifetime of login tokens
	Seed          bool          // record demo data
	// CursorKey seals the listings' cursors; empty: a random key made at
	// start (cursors then last as long as the process).
	CursorKey []byte
	Log       *slog.Logger
	// S3Endpoint is an S3-compatible server for the uploads bucket; empty
	// starts the embedded one.
	S3Endpoint string
	// Bucket names the uploads bucket (created unless it exists);
	// DefaultBucket when empty.
	Bucket string
	// NotifyInterval is how often the uploads prefix is listed for new
	// objects, whose ObjectCreated events the stack delivers;
	// DefaultNotifyInterval when zero.
	NotifyInterval time.Duration
	// S3OptionsFor, when set, gives each function its own S3 client of the
	// uploads bucket with these options, by logical id (tests that record
	// the S3 actions each function uses).
	S3OptionsFor func(function string) []func(*s3.Options)
	// UploadMaxBytes lowers the largest object the ingest function reads
	// (tests); zero keeps 100 MiB.
	UploadMaxBytes int64
	// SARIFInlineMax lowers the largest SARIF log GET /pr/{pr_id}/sarif
	// answers inline (tests); zero keeps 5 MiB.
	SARIFInlineMax int
	// Operations are functions built beside those of the operations table
	// (tests of the triggers' machinery, with a template that names them).
	Operations []ops.Operation
	// RedeliverAfter is how long a queue's failed message stays invisible,
	// and how long a stream waits before it retries a failed batch;
	// DefaultRedeliverAfter when zero.
	RedeliverAfter time.Duration
	// Now is every function's clock (the authorizer's, the scheduled
	// expiry's and the event functions' too) and the queues' delays';
	// time.Now when nil. Tests move it past an expiry or a retry's wait.
	Now func() time.Time
	// WorkLease is the lease of durable work (store.WithWorkLease); zero
	// keeps internal/queue/work's.
	WorkLease time.Duration
	// ScheduleEvery, when set, runs every scheduled function at this
	// interval instead of its rate (tests that wait for the scheduled
	// function without waiting a minute).
	ScheduleEvery time.Duration
	// SecretsKey seals webhook secrets and integration tokens; empty: a
	// random key made at start (sealed values then last as long as the
	// process).
	SecretsKey []byte
	// StrictEgress turns off what the local stack allows by default: http
	// webhooks and integrations on loopback hosts (the deployed default).
	StrictEgress bool
	// Resolver resolves the names of webhooks and integrations (nil: the
	// system's), for tests of names that change their answer.
	Resolver egress.Resolver
	// DashboardURL is the base URL commit statuses link to.
	DashboardURL string
	// SSO is single sign-on's configuration (the client's secret in
	// SSO.ClientSecret); none when SSO.Issuer is empty, make run's default.
	SSO config.SSO
	// PasswordLoginOff switches password login off (PASSWORD_LOGIN=false).
	PasswordLoginOff bool
	// AttemptTimeout bounds a delivery attempt (zero: the contract's 10 s).
	AttemptTimeout time.Duration
	// Observe, when set, is told the IAM action (sqs:SendMessage@<queue>,
	// events:PutEvents@EventBus, secretsmanager:GetSecretValue@<secret>) of
	// each call a function makes to the queues, the bus and the keys, by
	// the function's logical id.
	Observe func(function, action string)
}

// DefaultRedeliverAfter is how long the local queues and streams wait
// before they deliver again what failed.
const DefaultRedeliverAfter = time.Second

// DefaultBucket is the local uploads bucket's name.
const DefaultBucket = "scangate-uploads"

// Stack is the running local service.
type Stack struct {
	Handler   http.Handler
	Store     *store.Store
	Embedded  *Embedded          // nil on an external endpoint
	AdminNote string             // how to log in as the first admin
	S3        *EmbeddedS3        // nil on an external S3 endpoint
	Bucket    *bucket.Bucket     // the uploads bucket
	functions map[string]any     // handlers in the forms lambda.NewHandler takes
	schedules map[string]string  // logical id: schedule expression
	every     time.Duration      // the schedules' interval, when set (Options.ScheduleEvery)
	queues    map[string]*Queue  // by logical id
	streams   map[string]*Stream // by the logical id of their function
	lanes     *Lanes
	bus       *Bus
	capture   func(*dynamodb.Options) // publishes a client's writes to the streams
	tally     *metrics.Tally          // the functions' metrics, for HealthPath

	stopTriggers context.CancelFunc
	triggers     sync.WaitGroup
}

// Queue is the queue of template.yaml with this logical id, nil if none.
func (s *Stack) Queue(logicalID string) *Queue { return s.queues[logicalID] }

// Lanes are the delivery queues by lane.
func (s *Stack) Lanes() *Lanes { return s.lanes }

// Bus is the event bus: what the dispatcher put on it.
func (s *Stack) Bus() *Bus { return s.bus }

// Stream is the table's stream as the function with this logical id reads
// it, nil if no DynamoDB event of the template invokes that function.
func (s *Stack) Stream(function string) *Stream { return s.streams[function] }

// Invoke runs a function of the template with an event as Lambda would:
// the event's JSON in, the answer's JSON out. The local triggers that are
// not API Gateway (S3 events, schedules) invoke their functions this way.
func (s *Stack) Invoke(ctx context.Context, logicalID string, event []byte) ([]byte, error) {
	h, ok := s.functions[logicalID]
	if !ok {
		return nil, fmt.Errorf("invoke: no function %s", logicalID)
	}
	// A handler of aws-lambda-go serves one invocation at a time (it
	// encodes every answer into one buffer of its own), as an execution
	// environment does: each invocation gets its own, as each concurrent
	// invocation on AWS gets an environment of its own.
	return lambda.NewHandler(h).Invoke(ctx, event)
}

// Close stops the triggers (S3 events, queues, streams; after the
// invocations under way) and the embedded servers, if any.
func (s *Stack) Close() error {
	if s.stopTriggers != nil {
		s.stopTriggers()
		s.triggers.Wait()
	}
	var errs []error
	if s.S3 != nil {
		errs = append(errs, s.S3.Close())
	}
	if s.Embedded != nil {
		errs = append(errs, s.Embedded.Close())
	}
	return errors.Join(errs...)
}

// Start builds the stack: the table, the first admin, and the gateway in
// front of every function of the template. It returns once all are ready.
func Start(ctx context.Context, o Options) (*Stack, error) {
	t, err := gateway.ReadTemplate(o.Template)
	if err != nil {
		return nil, err
	}
	s := &Stack{every: o.ScheduleEvery, tally: metrics.NewTally(time.Now())}
	if o.Log != nil {
		// The functions' metric lines are added up for the health page
		// (HealthPath) as they are logged.
		o.Log = slog.New(s.tally.Handler(o.Log.Handler()))
	}
	s.schedules = t.Schedules
	if err := s.start(ctx, t, o); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Stack) start(ctx context.Context, t *gateway.Template, o Options) error {
	db := o.Client
	if db == nil {
		endpoint := o.Endpoint
		if endpoint == "" {
			var err error
			if s.Embedded, err = StartEmbedded(); err != nil {
				return err
			}
			endpoint = s.Embedded.URL
		}
		var err error
		if db, err = awsclient.NewDynamoDB(ctx, endpoint); err != nil {
			return err
		}
	}
	if err := store.CreateTable(ctx, db, o.Table); err != nil {
		return err
	}
	if err := s.openStreams(t); err != nil {
		return err
	}
	if len(s.streams) > 0 {
		streams := slices.Collect(maps.Values(s.streams))
		s.capture = func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, captureWrites(streams)) }
		db = dynamodb.New(db.Options(), s.capture)
	}
	// The functions' metrics, as boot.Open wires them: the store's and
	// DynamoDB's throttles, written by the stack's logger.
	m := metrics.New(o.Log)
	db = dynamodb.New(db.Options(), awsclient.CountThrottles(m))
	s.Store = store.New(db, o.Table, store.WithWorkLease(o.WorkLease), store.WithMetrics(m))
	if err := s.bootstrap(ctx, o); err != nil {
		return err
	}
	if o.Seed {
		if err := Seed(ctx, s.Store, time.Now()); err != nil {
			return err
		}
	}
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if err := s.openUploads(ctx, o); err != nil {
		return err
	}
	s.openQueues(t, o)
	if err := s.wire(t, o); err != nil {
		return err
	}
	return s.startTriggers(t, o)
}

// bootstrap creates the first admin unless the table has one.
func (s *Stack) bootstrap(ctx context.Context, o Options) error {
	password, generated := o.AdminPassword, false
	if password == "" {
		var err error
		if password, err = passwordpkg.Generate(); err != nil {
			return err
		}
		generated = true
	}
	_, err := auth.Bootstrap{Store: s.Store, Passwords: passwordpkg.Argon2id{}, Fold: emailfold.Fold, Who: scangate.Who{RequestID: "local-bootstrap"}}.Admin(ctx, o.AdminUsername, o.AdminUsername+"@scangate.local", password)
	switch {
	case scangate.KindOf(err) == scangate.KindConflict:
		s.AdminNote = "an admin exists already in this table; log in with its password"
	case err != nil:
		return err
	default:
		s.AdminNote = fmt.Sprintf("admin login: username %q, the password of SCANGATE_ADMIN_PASSWORD", o.AdminUsername)
		if generated {
			// Only a generated password is shown, once; one that was set
			// is its owner's and never printed.
			s.AdminNote = fmt.Sprintf("admin login: username %q, password %q", o.AdminUsername, password)
		}
		switch {
		case o.PasswordFile == "":
		case generated:
			if err := writeSecret(o.PasswordFile, password); err != nil {
				return err
			}
			s.AdminNote += " (also in " + o.PasswordFile + ")"
		default:
			// A password that was set is written nowhere; a file left by
			// an earlier run would name a password this admin does not have.
			if err := os.Remove(o.PasswordFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", o.PasswordFile, err)
			}
		}
	}
	return nil
}

// wire builds every function of the operations table, each from its own
// dependencies, keeps each invokable by logical id, and puts the local API
// Gateway in front of the REST proxy handlers and the authorizer.
func (s *Stack) wire(t *gateway.Template, o Options) error {
	cfg := config.Config{Table: o.Table, Endpoint: o.Endpoint, TokenTTL: o.TokenTTL, CursorKey: o.CursorKey, UploadMaxBytes: o.UploadMaxBytes,
		SARIFInlineMax: o.SARIFInlineMax, LoopbackHTTP: !o.StrictEgress, DashboardURL: o.DashboardURL, AttemptTimeout: o.AttemptTimeout,
		SSO: o.SSO, PasswordLoginOff: o.PasswordLoginOff}
	if len(cfg.CursorKey) == 0 {
		cfg.CursorKey = make([]byte, 32)
		if _, err := rand.Read(cfg.CursorKey); err != nil {
			return fmt.Errorf("cursor key: %w", err)
		}
	}
	if _, err := api.NewCursors(cfg.CursorKey); err != nil {
		return err
	}
	secretsKey, err := localKey(o.SecretsKey)
	if err != nil {
		return err
	}
	if _, err := seal.New(secretsKey); err != nil {
		return err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	rules := egress.Policy{LoopbackHTTP: cfg.LoopbackHTTP, Resolver: o.Resolver}
	s.functions = map[string]any{}
	proxies := map[string]gateway.Handler{}
	var authorizer gateway.AuthorizerHandler
	for _, op := range append(ops.Operations(), o.Operations...) {
		id := ops.LogicalID(op.Name)
		// Each function reads the stack's own keys as a deployed one reads
		// them from Secrets Manager: at first use, told to Observe.
		d := deps{store: s.Store, log: o.Log, config: cfg, bucket: s.Bucket, lanes: s.lanes, bus: s.bus,
			cursors: api.NewLazyCursors(readKey(cfg.CursorKey, id, "CursorKey", o.Observe)),
			box:     seal.Lazy(readKey(secretsKey, id, "SecretsKey", o.Observe)),
			egress:  rules, now: now, work: s.workSender(t, id, o.Observe), sso: ssoSecret(o.SSO.ClientSecret, id, o.Observe)}
		if o.StoreFor != nil {
			d.store = o.StoreFor(id, s.capture)
		}
		if o.Observe != nil {
			d.lanes, d.bus = observedLanes{s.lanes, id, o.Observe}, observedBus{s.bus, id, o.Observe}
		}
		if o.S3OptionsFor != nil {
			if d.bucket, err = s.openBucket(o, o.S3OptionsFor(id)...); err != nil {
				return err
			}
		}
		h := op.Handler(d)
		s.functions[id] = h
		switch h := h.(type) {
		case api.Handler:
			proxies[id] = gateway.Handler(h)
		case api.AuthorizerHandler:
			authorizer = gateway.AuthorizerHandler(h)
		}
	}
	gw, err := gateway.NewServer(t, proxies, authorizer, o.AuthorizerTTL, o.Log)
	if err != nil {
		return err
	}
	s.Handler = s.health(gw, authorizer)
	return nil
}

// localKey is the secrets key of the stack: key, or a random one.
func localKey(key []byte) ([]byte, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("secrets key: %w", err)
		}
	}
	return key, nil
}

// readKey is how function reads key, the template's secret of logical id
// secret: at once, and told to observe as the IAM action
// (secretsmanager:GetSecretValue@<secret>) a deployed function needs.
func readKey(key []byte, function, secret string, observe func(function, action string)) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		if observe != nil {
			observe(function, "secretsmanager:GetSecretValue@"+secret)
		}
		return key, nil
	}
}

// ssoSecret is the client secret of single sign-on as function reads it
// (observed as the template's SsoClientSecret).
func ssoSecret(secret, function string, observe func(function, action string)) func(context.Context) (string, error) {
	key := readKey([]byte(secret), function, "SsoClientSecret", observe)
	return func(ctx context.Context) (string, error) {
		b, err := key(ctx)
		if err == nil && len(b) == 0 {
			return "", fmt.Errorf("the local stack has no client secret of single sign-on (Options.SSO.ClientSecret)")
		}
		return string(b), err
	}
}

func writeSecret(path, secret string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
