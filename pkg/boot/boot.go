// Package boot is what every function's main does before it builds its
// handler: read the environment once, build the store and the logger. Each
// main then calls its constructor with exactly what it takes (building
// what only it links, such as the uploads bucket, itself) and hands the
// handler to lambda.Start.
package boot

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/egress"
	"github.com/scangate/scangate/pkg/seal"
	"github.com/scangate/scangate/pkg/store"
)

// Function is what a function's main builds first.
type Function struct {
	Name   string
	Store  *store.Store
	Config config.Config
	Log    *slog.Logger
}

// Open reads the function's environment and builds the store and the
// logger. A function that cannot start says why, under its name, and
// exits: Lambda reports the failed init.
func Open(name string) Function {
	st, cfg, err := store.Open(os.Getenv)
	f := Function{Name: name, Store: st, Config: cfg, Log: cfg.Logger(os.Stdout)}
	f.Check(err)
	return f
}

// Check exits as Open does when err is not nil: for what a main builds
// itself.
func (f Function) Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, f.Name+":", err)
		os.Exit(1)
	}
}

// Cursors seals the cursors of a listing with CURSOR_KEY; a listing does
// not start without one.
func (f Function) Cursors() api.Cursors {
	c, err := api.NewCursors(f.Config.CursorKey)
	f.Check(err)
	return c
}

// Box seals and opens webhook secrets and integration tokens with
// SECRETS_KEY; a function that keeps such secrets does not start without
// it.
func (f Function) Box() *seal.Box {
	b, err := seal.FromEnv(os.Getenv)
	f.Check(err)
	return b
}

// Egress is the outbound rules of webhooks, from the configuration.
func (f Function) Egress() egress.Policy { return egress.Policy{LoopbackHTTP: f.Config.LoopbackHTTP} }
