package local

import (
	"context"

	"fmt"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

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
	// StoreFor, when set, gives each function its own store (see Handlers).
	StoreFor      func(function string) *store.Store
	AdminUsername string        // first admin's username
	AdminPassword string        // first admin's password; generated when empty
	PasswordFile  string        // where a generated password is written (0600); empty: nowhere
	AuthorizerTTL time.Duration // authorizer cache TTL; negative: the template's
	TokenTTL      time.Duration // lifetime of login tokens
	Seed          bool          // record demo data
	Log           *slog.Logger
}

// Stack is the running local service.
type Stack struct {
	Handler   http.Handler
	Store     *store.Store
	Embedded  *Embedded // nil on an external endpoint
	AdminNote string    // how to log in as the first admin
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
	db := o.Client
	if db == nil {
		endpoint := o.Endpoint
		if endpoint == "" {
			if s.Embedded, err = StartEmbedded(); err != nil {
				return nil, err
			}
			endpoint = s.Embedded.URL
		}
		if db, err = store.NewClient(ctx, endpoint); err != nil {
			return nil, err
		}
	}
	if err := store.CreateTable(ctx, db, o.Table); err != nil {
		return nil, err
	}
	s.Store = store.New(db, o.Table)

	password, generated := o.AdminPassword, false
	if password == "" {
		if password, err = GeneratePassword(); err != nil {
			return nil, err
		}
		generated = true
	}
	_, err = BootstrapAdmin(ctx, s.Store, o.AdminUsername, o.AdminUsername+"@scangate.local", password)
	switch {
	case scangate.KindOf(err) == scangate.KindConflict:
		s.AdminNote = "an admin exists already in this table; log in with its password"
	case err != nil:
		return nil, err
	default:
		s.AdminNote = fmt.Sprintf("admin login: username %q, password %q", o.AdminUsername, password)
		if generated && o.PasswordFile != "" {
			if err := writeSecret(o.PasswordFile, password); err != nil {
				return nil, err
			}
			s.AdminNote += " (also in " + o.PasswordFile + ")"
		}
	}

	if o.Seed {
		if err := Seed(ctx, s.Store, time.Now()); err != nil {
			return nil, err
		}
	}
	storeFor := o.StoreFor
	if storeFor == nil {
		storeFor = func(string) *store.Store { return s.Store }
	}
	fns, authorizer := Handlers(storeFor, o.TokenTTL, o.Log)
	gw, err := gateway.NewServer(t, fns, authorizer, o.AuthorizerTTL, o.Log)
	if err != nil {
		return nil, err
	}
	s.Handler = gw
	return s, nil
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
