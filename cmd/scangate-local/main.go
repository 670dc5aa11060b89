// Command scangate-local runs the whole API on http://127.0.0.1:3000/api,
// and the dashboard beside it at http://127.0.0.1:3000/:
// the functions of template.yaml behind a local stand-in for API Gateway and
// its TOKEN authorizer, on an embedded DynamoDB-API server (or on
// DYNAMODB_ENDPOINT) and an embedded S3-compatible server for large uploads
// (or S3_ENDPOINT), with the table created, the first admin bootstrapped
// and demo data seeded before it starts listening.
//
// On the embedded server, with SCANGATE_STATE naming a file (make run
// names .build/local-state.json), it keeps its state across restarts: the
// table is loaded from that file when it starts and saved there when it
// stops (SIGINT, SIGTERM), with the keys that seal cursors and secrets in
// local-keys beside it; SCANGATE_FRESH=1 starts empty (and replaces
// both). Unset or "off" (scripts that run the binary themselves, such as
// the fuzz tier's), it keeps nothing.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/localstack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scangate-local:", err)
		os.Exit(1)
	}
}

func getenv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := config.Load(func(name string) string {
		if name == "TABLE_NAME" {
			return getenv(name, "scangate")
		}
		return os.Getenv(name)
	})
	if err != nil {
		return err
	}
	ttl, every, err := durations()
	if err != nil {
		return err
	}
	// Listen first: the commit statuses link to the dashboard this
	// process serves, at the address it listens on, unless DASHBOARD_URL
	// names another.
	ln, err := net.Listen("tcp", getenv("SCANGATE_ADDR", "127.0.0.1:3000"))
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }()
	kept, err := openState(ctx, cfg.Table, cfg.Endpoint, getenv("SCANGATE_STATE", "off"), os.Getenv("SCANGATE_FRESH") == "1")
	if err != nil {
		return err
	}
	defer kept.close()
	fmt.Println(kept.note)
	stack, err := startStack(ctx, cfg, kept, ttl, every, ln.Addr())
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stack.Close()
		}
	}()

	// EventBridge's part: the scheduled functions (allowlists' expiries)
	// run at their rate, as deployed.
	if err := stack.RunSchedules(ctx, cfg.Logger(os.Stderr)); err != nil {
		return err
	}
	srv := &http.Server{Handler: dashboard.Local(stack.Handler), ReadHeaderTimeout: 10 * time.Second}
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if kept.loaded {
		if w := checkKeptAdmin(stack.Handler, getenv("SCANGATE_ADMIN_USERNAME", "admin"), os.Getenv("SCANGATE_ADMIN_PASSWORD"), ".build/admin-password"); w != "" {
			fmt.Println(w)
		}
	}
	fmt.Printf("scangate listening on http://%s/api\n%s\nthe dashboard: http://%s/\n", ln.Addr(), adminNote(stack.AdminNote, kept), ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// The requests under way end, then the triggers, then the table is
	// saved: what is saved is what they left.
	<-shut
	stopped = true
	if err := stack.Close(); err != nil {
		return err
	}
	return kept.save(context.Background())
}

// startStack starts the local stack on the kept table with the
// program's settings; its dashboard is the one served at addr unless
// DASHBOARD_URL names another.
func startStack(ctx context.Context, cfg config.Config, k *kept, ttl, every time.Duration, addr net.Addr) (*localstack.Stack, error) {
	return localstack.Start(ctx, localstack.Options{
		Template:      getenv("SCANGATE_TEMPLATE", "template.yaml"),
		Table:         cfg.Table,
		Endpoint:      k.endpoint,
		CursorKey:     k.keys.Cursor,
		SecretsKey:    k.keys.Secrets,
		AdminUsername: getenv("SCANGATE_ADMIN_USERNAME", "admin"),
		AdminPassword: os.Getenv("SCANGATE_ADMIN_PASSWORD"),
		PasswordFile:  ".build/admin-password",
		AuthorizerTTL: ttl,
		TokenTTL:      cfg.TokenTTL,
		Seed:          os.Getenv("SCANGATE_SEED") != "0" && !k.loaded,
		Log:           cfg.Logger(os.Stderr),
		S3Endpoint:    os.Getenv("S3_ENDPOINT"),
		Bucket:        getenv("UPLOADS_BUCKET", localstack.DefaultBucket),
		WorkLease:     cfg.WorkLease,
		ScheduleEvery: every,
		DashboardURL:  cmp.Or(cfg.DashboardURL, dashboardURL(addr)),
	})
}

// durations reads the authorizer cache's TTL (SCANGATE_AUTHORIZER_TTL in
// seconds; -1, the stack's default, when unset) and the schedule's period
// (SCANGATE_SCHEDULE_EVERY; 0, the deployed rate, when unset).
func durations() (ttl, every time.Duration, err error) {
	ttl = -1
	if s := os.Getenv("SCANGATE_AUTHORIZER_TTL"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("SCANGATE_AUTHORIZER_TTL %q is not a number of seconds", s)
		}
		ttl = time.Duration(n) * time.Second
	}
	if s := os.Getenv("SCANGATE_SCHEDULE_EVERY"); s != "" {
		if every, err = time.ParseDuration(s); err != nil || every <= 0 {
			return 0, 0, fmt.Errorf("SCANGATE_SCHEDULE_EVERY %q is not a positive duration such as 2s", s)
		}
	}
	return ttl, every, nil
}

// dashboardURL is the base URL of the dashboard served on addr: its own
// address, or localhost's for a listener on every interface.
func dashboardURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
