// Package boot is what every function's main does before it builds its
// handler: read the environment once, build the store and the logger. Each
// main then calls its constructor with exactly what it takes (building
// what only it links, such as the uploads bucket, itself) and hands the
// handler to lambda.Start; an API function's handler goes through API
// first, which lets the dashboard read its answers.
package boot

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/store"
)

// Env is what every function's main reads first: its name, its
// configuration and its logger.
type Env struct {
	Name   string
	Config config.Config
	Log    *slog.Logger
}

// Function is what the main of a function that uses the table builds
// first: its Env and the store.
type Function struct {
	Env
	Store *store.Store
}

// Open reads the function's environment and builds the store and the
// logger (which also writes the store's metrics). A function that cannot start says why, under its name, and
// exits: Lambda reports the failed init.
func Open(name string) Function {
	e := OpenWithoutStore(name)
	st, err := store.Open(e.Config, os.Getenv, metrics.New(e.Log))
	e.Check(err)
	return Function{Env: e, Store: st}
}

// OpenWithoutStore is Open for a function that does not use the table
// (the dashboard's publisher): the configuration and the logger, no
// DynamoDB client.
func OpenWithoutStore(name string) Env {
	SetMemoryLimit(os.Getenv)
	cfg, err := config.Load(os.Getenv)
	e := Env{Name: name, Config: cfg, Log: cfg.Logger(os.Stdout)}
	e.Check(err)
	return e
}

// MemoryLimit is the Go runtime's soft memory limit for a function of
// mb MiB (its MemorySize, which Lambda gives in AWS_LAMBDA_FUNCTION_MEMORY_SIZE):
// all of it but a tenth, and at least 32 MiB, left for what the limit
// does not count (the binary's pages, memory outside the Go heap). Past
// it the garbage collector runs harder rather than the function running
// out of memory.
func MemoryLimit(mb int64) int64 {
	total := mb << 20
	return total - max(total/10, 32<<20)
}

// SetMemoryLimit sets the Go runtime's soft memory limit from the
// function's memory (MemoryLimit of AWS_LAMBDA_FUNCTION_MEMORY_SIZE),
// unless GOMEMLIMIT is set (the runtime applied it at start) or the
// memory is not given (outside Lambda). It returns the limit it set, or
// -1.
func SetMemoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return -1
	}
	mb, err := strconv.ParseInt(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64)
	if err != nil || mb < 128 {
		return -1
	}
	limit := MemoryLimit(mb)
	debug.SetMemoryLimit(limit)
	return limit
}

// Check exits as Open does when err is not nil: for what a main builds
// itself.
func (e Env) Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, e.Name+":", err)
		os.Exit(1)
	}
}

// Egress is the outbound rules of webhooks, from the configuration.
func (f Function) Egress() egress.Policy { return egress.Policy{LoopbackHTTP: f.Config.LoopbackHTTP} }

// API is an API function's handler as its main starts it: h, with its
// answers readable by the dashboard's origin alone (api.CORS with
// DASHBOARD_ORIGIN). Every API function's main wraps its handler here,
// once (TestMainsCallTheirConstructor); the local stack, where the
// dashboard and the API share an origin, does not.
func (e Env) API(h api.Handler) api.Handler {
	return api.CORS(e.Config.DashboardOrigin, h)
}
