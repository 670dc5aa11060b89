// Package boot starts a Lambda function: the whole of a function's main
// but the choice of its handler and of the dependencies only it links.
package boot

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/store"
)

// Option adds to a function's dependencies what the function alone needs,
// from its environment (read by getenv).
type Option func(getenv func(string) string, d *api.Deps) error

// Start reads the function's environment once, builds the store and the
// dependencies with opts, and hands the handler that build makes of them
// to the Lambda runtime. A function that cannot start says why, under its
// name, and exits: Lambda reports the failed init.
func Start[H any](name string, build func(api.Deps) H, opts ...Option) {
	st, cfg, err := store.Open(os.Getenv)
	d := api.Deps{Store: st, Log: cfg.Logger(os.Stdout), Now: time.Now, Config: cfg}
	for _, opt := range opts {
		if err == nil {
			err = opt(os.Getenv, &d)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	lambda.Start(Handler(build, d))
}

// Handler is what a function hands to the Lambda runtime: the handler
// build makes of d, and for an API Gateway handler, its answers readable
// by the dashboard's origin (api.CORS, DASHBOARD_ORIGIN).
func Handler[H any](build func(api.Deps) H, d api.Deps) any {
	h := build(d)
	if ah, ok := any(h).(api.Handler); ok {
		return api.CORS(d.Config.DashboardOrigin, ah)
	}
	return h
}

// Cursors is the option of the listings: they seal their cursors with
// CURSOR_KEY and do not start without it.
func Cursors(_ func(string) string, d *api.Deps) error { return d.Config.NeedCursorKey() }
