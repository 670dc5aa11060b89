// Package local assembles the whole service on one machine: the embedded
// DynamoDB-API server, the table, the first admin, and every function of
// template.yaml wired to its handler behind the local API Gateway.
package local

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"time"

	miniserver "github.com/truora/minidyn/server"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/gateway"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

// Embedded is the in-process DynamoDB-API server (minidyn) on a loopback port.
type Embedded struct {
	URL    string
	Server *miniserver.Server
	srv    *http.Server
}

// StartEmbedded starts the embedded DynamoDB-API server.
func StartEmbedded() (*Embedded, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the embedded DynamoDB server: %w", err)
	}
	mini := miniserver.NewServer()
	srv := &http.Server{Handler: mini, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Embedded{URL: "http://" + ln.Addr().String(), Server: mini, srv: srv}, nil
}

// Close stops the embedded server.
func (e *Embedded) Close() error { return e.srv.Close() }

// Handlers wires each function of template.yaml, by logical id, to the
// handler its Lambda runs. storeFor gives each function its store (the
// local server gives all the same one; a test may tell them apart).
func Handlers(storeFor func(function string) *store.Store, tokenTTL time.Duration, log *slog.Logger) (map[string]gateway.Handler, gateway.AuthorizerHandler) {
	login := auth.Login{Store: storeFor("LoginFunction"), TokenTTL: tokenTTL, Now: time.Now}
	fns := map[string]gateway.Handler{
		"LoginFunction":           api.Login(login, log).Handle,
		"CreateUserFunction":      api.CreateUser(storeFor("CreateUserFunction"), auth.HashPassword, time.Now, log).Handle,
		"UpdateUserFunction":      api.UpdateUser(storeFor("UpdateUserFunction"), time.Now, log).Handle,
		"RecordScanFunction":      api.RecordScan(storeFor("RecordScanFunction"), time.Now, log).Handle,
		"GetScanFunction":         api.GetScan(storeFor("GetScanFunction"), log).Handle,
		"CreateAllowlistFunction": api.CreateAllowlist(storeFor("CreateAllowlistFunction"), time.Now, log).Handle,
		"UpdateAllowlistFunction": api.UpdateAllowlist(storeFor("UpdateAllowlistFunction"), time.Now, log).Handle,
	}
	a := auth.Authorizer{Store: storeFor("AuthorizerFunction"), Now: time.Now, Log: log}
	return fns, a.Handle
}

// BootstrapAdmin creates the first admin of a deployment; it fails with a
// conflict when an active admin exists already or the name is taken.
func BootstrapAdmin(ctx context.Context, st *store.Store, username, email, password string) (scangate.User, error) {
	var p scangate.Problems
	scangate.NewUser{Username: username, Email: email, Password: password, Role: scangate.RoleAdmin}.Validate(&p)
	if err := p.Err(); err != nil {
		return scangate.User{}, fmt.Errorf("bootstrap admin: %v", p)
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return scangate.User{}, err
	}
	now := scangate.At(time.Now())
	return st.Bootstrap(ctx, scangate.User{Username: username, Email: email, PasswordHash: hash, CreatedAt: now, UpdatedAt: now})
}

// GeneratePassword returns a random password of 24 letters and digits.
func GeneratePassword() (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, 24)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b), nil
}
