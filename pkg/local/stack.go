package local

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth"
	passwordpkg "github.com/scangate/scangate/pkg/auth/password"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/fold"
	"github.com/scangate/scangate/pkg/gateway"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

// Options configure a local stack.
type Options struct {
	Template string           // path of template.yaml
	Table    string           // table name
	Endpoint string           // DynamoDB endpoint; empty starts the embedded server
	Client   *dynamodb.Client // a client to use instead of one built for Endpoint
	// StoreFor, when set, gives each function its own store, by logical id.
	StoreFor      func(function string) *store.Store
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
}

// Stack is the running local service.
type Stack struct {
	Handler   http.Handler
	Store     *store.Store
	Embedded  *Embedded // nil on an external endpoint
	AdminNote string    // how to log in as the first admin
	functions map[string]lambda.Handler
	schedules map[string]string // logical id: schedule expression
}

// Invoke runs a function of the template with an event as Lambda would:
// the event's JSON in, the answer's JSON out. The local triggers that are
// not API Gateway (S3 events, schedules) invoke their functions this way.
func (s *Stack) Invoke(ctx context.Context, logicalID string, event []byte) ([]byte, error) {
	h, ok := s.functions[logicalID]
	if !ok {
		return nil, fmt.Errorf("invoke: no function %s", logicalID)
	}
	return h.Invoke(ctx, event)
}

// Close stops the embedded DynamoDB server, if any.
func (s *Stack) Close() error {
	if s.Embedded != nil {
		return s.Embedded.Close()
	}
	return nil
}

// Start builds the stack: the table, the first admin, and the gateway in
// front of every function of the template. It returns once all are ready.
func Start(ctx context.Context, o Options) (*Stack, error) {
	t, err := gateway.ReadTemplate(o.Template)
	if err != nil {
		return nil, err
	}
	s := &Stack{}
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
		if db, err = store.NewClient(ctx, endpoint); err != nil {
			return err
		}
	}
	if err := store.CreateTable(ctx, db, o.Table); err != nil {
		return err
	}
	s.Store = store.New(db, o.Table)
	if err := s.bootstrap(ctx, o); err != nil {
		return err
	}
	if o.Seed {
		if err := Seed(ctx, s.Store, time.Now()); err != nil {
			return err
		}
	}
	return s.wire(t, o)
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
	_, err := auth.Bootstrap{Store: s.Store, Passwords: passwordpkg.Argon2id{}, Fold: fold.Fold, Who: scangate.Who{RequestID: "local-bootstrap"}}.Admin(ctx, o.AdminUsername, o.AdminUsername+"@scangate.local", password)
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
		if generated && o.PasswordFile != "" {
			if err := writeSecret(o.PasswordFile, password); err != nil {
				return err
			}
			s.AdminNote += " (also in " + o.PasswordFile + ")"
		}
	}
	return nil
}

// wire builds every function of the operations table and puts the local
// API Gateway in front of them.
func (s *Stack) wire(t *gateway.Template, o Options) error {
	storeFor := o.StoreFor
	if storeFor == nil {
		storeFor = func(string) *store.Store { return s.Store }
	}
	cfg := config.Config{Table: o.Table, Endpoint: o.Endpoint, TokenTTL: o.TokenTTL, CursorKey: o.CursorKey}
	if len(cfg.CursorKey) == 0 {
		cfg.CursorKey = make([]byte, 32)
		if _, err := rand.Read(cfg.CursorKey); err != nil {
			return fmt.Errorf("cursor key: %w", err)
		}
	}
	fns := Functions(func(id string) api.Deps {
		return api.Deps{Store: storeFor(id), Log: o.Log, Now: time.Now, Config: cfg, Passwords: passwordpkg.Argon2id{}, Fold: fold.Fold}
	})
	s.functions = map[string]lambda.Handler{}
	for _, f := range fns {
		s.functions[f.LogicalID] = lambda.NewHandler(f.Handler)
	}
	proxies, authorizer := gatewayHandlers(fns)
	gw, err := gateway.NewServer(t, proxies, authorizer, o.AuthorizerTTL, o.Log)
	if err != nil {
		return err
	}
	s.Handler = gw
	return nil
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
