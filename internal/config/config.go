// Package config reads the settings that every scangate program shares from
// its environment, once, in main.
package config

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scangate/scangate/internal/metrics"
)

// Config holds the settings of a function or program.
type Config struct {
	Table    string        // TABLE_NAME
	Endpoint string        // DYNAMODB_ENDPOINT: a DynamoDB-compatible endpoint instead of AWS
	TokenTTL time.Duration // TOKEN_TTL_SECONDS: lifetime of login tokens (default 12 h)
	LogLevel slog.Level    // LOG_LEVEL: DEBUG, INFO, WARN or ERROR (default INFO)
	// AuditRetention is AUDIT_RETENTION_DAYS: how long audit entries are
	// kept before the table's TTL removes them (default 400 days).
	AuditRetention time.Duration
	// CursorKey seals the cursors of listings in the local stack, which
	// keeps its own keys; a function reads its key from Secrets Manager
	// (CURSOR_KEY_ID), never from the environment.
	CursorKey []byte
	// UploadMaxBytes is UPLOAD_MAX_BYTES: the largest uploaded object the
	// ingest function reads (default and ceiling 100 MiB; tests lower it).
	UploadMaxBytes int64
	// SARIFInlineMax is SARIF_INLINE_MAX_BYTES: the largest SARIF log GET
	// /pr/{pr_id}/sarif answers inline, as Lambda's response escapes it
	// (default and ceiling 5 MiB; tests lower it to take the bucket's way).
	SARIFInlineMax int
	// LoopbackHTTP is EGRESS_LOOPBACK_HTTP=true: webhooks and integrations
	// may be http URLs of loopback hosts (local receivers). Off in the
	// template, on in the local stack and tests.
	LoopbackHTTP bool
	// PrivateIntegrations is INTEGRATIONS_PRIVATE_NETWORK=true: an
	// integration's API may be at a private address (GitHub Enterprise
	// Server on the deployment's network); never a webhook's.
	PrivateIntegrations bool
	// DashboardURL is DASHBOARD_URL: the dashboard's base URL, which
	// commit statuses link to ("" for no link).
	DashboardURL string
	// AttemptTimeout bounds one delivery attempt; zero is the contract's
	// 10 s (webhook.Timeout). Not read from the environment: tests of a
	// receiver that hangs until they let it answer lengthen it.
	AttemptTimeout time.Duration
	// DashboardOrigin is DASHBOARD_ORIGIN: the one origin (scheme, host,
	// port) whose pages may read the API's answers (CORS); empty: none.
	DashboardOrigin string
	// WorkLease is WORK_LEASE_SECONDS: the lease of durable work, held by
	// a runner or dispatched to the work queue, after which the scheduled
	// function takes it over (0: internal/queue/work's, 2 and 15 minutes). Tests of
	// the local stack shorten it.
	WorkLease time.Duration
	// SSO is single sign-on through the organisation's OpenID provider
	// (POST /auth/oidc/session; internal/sso reads and checks it).
	SSO SSO
	// PasswordLoginOff is PASSWORD_LOGIN=false: POST /auth/token refuses
	// every login (people sign in through single sign-on); true or unset
	// keeps password login.
	PasswordLoginOff bool
}

// SSO is the single sign-on of a deployment; Issuer empty: none.
type SSO struct {
	Issuer   string // SSO_ISSUER: the provider's issuer URL
	ClientID string // SSO_CLIENT_ID: scangate's client at the provider
	Claim    string // SSO_CLAIM: the claim mapped to roles ("" for groups)
	Roles    string // SSO_ROLES: {"admins":[...],"users":[...],"readonly":[...]} (JSON)
	// ClientSecretID is SSO_CLIENT_SECRET_ID: the id (ARN or name) of the
	// Secrets Manager secret holding the client's secret, read at run
	// time, never in the environment.
	ClientSecretID string
	// ClientSecret is the client's secret in the local stack, which keeps
	// its own (never read from the environment).
	ClientSecret string
}

// Defaults of the settings.
const (
	DefaultTokenTTL       = 12 * time.Hour
	DefaultAuditRetention = 400 * 24 * time.Hour
	// MaxUploadBytes is the default and ceiling of UploadMaxBytes.
	MaxUploadBytes = 100 << 20
	// MaxSARIFInlineBytes is the default and ceiling of SARIFInlineMax:
	// Lambda answers at most 6 MB, envelope and headers included.
	MaxSARIFInlineBytes = 5 << 20
)

// MinCursorKey is the fewest bytes a cursor key may have.
const MinCursorKey = 32

// Load reads the configuration through getenv (os.Getenv in main).
func Load(getenv func(string) string) (Config, error) {
	c := Config{Table: getenv("TABLE_NAME"), Endpoint: getenv("DYNAMODB_ENDPOINT"), TokenTTL: DefaultTokenTTL,
		AuditRetention: DefaultAuditRetention}
	if c.Table == "" {
		return c, fmt.Errorf("TABLE_NAME is not set")
	}
	if s := getenv("TOKEN_TTL_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("TOKEN_TTL_SECONDS %q is not a positive integer", s)
		}
		c.TokenTTL = time.Duration(n) * time.Second
	}
	if s := getenv("AUDIT_RETENTION_DAYS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("AUDIT_RETENTION_DAYS %q is not a positive integer", s)
		}
		c.AuditRetention = time.Duration(n) * 24 * time.Hour
	}
	if err := loadSizes(&c, getenv); err != nil {
		return c, err
	}
	if s := getenv("WORK_LEASE_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("WORK_LEASE_SECONDS %q is not a positive integer", s)
		}
		c.WorkLease = time.Duration(n) * time.Second
	}
	if err := loadSignIn(&c, getenv); err != nil {
		return c, err
	}
	for name, dst := range map[string]*bool{"EGRESS_LOOPBACK_HTTP": &c.LoopbackHTTP, "INTEGRATIONS_PRIVATE_NETWORK": &c.PrivateIntegrations} {
		switch getenv(name) {
		case "", "false":
		case "true":
			*dst = true
		default:
			return c, fmt.Errorf("%s must be true or false", name)
		}
	}
	c.DashboardURL = strings.TrimRight(getenv("DASHBOARD_URL"), "/")
	if s := getenv("LOG_LEVEL"); s != "" {
		if err := c.LogLevel.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
			return c, fmt.Errorf("LOG_LEVEL %q: %w", s, err)
		}
	}
	if s := getenv("DASHBOARD_ORIGIN"); s != "" {
		if err := checkOrigin(s); err != nil {
			return c, err
		}
		c.DashboardOrigin = s
	}
	// The keys are read from Secrets Manager at run time (internal/keys): one in
	// the environment is in the function's configuration, which anyone who
	// may read the configuration reads. Refuse to start rather than leave
	// it there.
	for _, name := range []string{"CURSOR_KEY", "SECRETS_KEY"} {
		if getenv(name) != "" {
			return c, fmt.Errorf("%s must not be set: the key is read from Secrets Manager (%s_ID names its secret)", name, name) // never the value
		}
	}
	return c, nil
}

// loadSizes reads the size limits into c: of an uploaded object
// (UPLOAD_MAX_BYTES) and of a SARIF log answered inline
// (SARIF_INLINE_MAX_BYTES), each by default and at most its ceiling.
func loadSizes(c *Config, getenv func(string) string) error {
	c.UploadMaxBytes = MaxUploadBytes
	if s := getenv("UPLOAD_MAX_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > MaxUploadBytes {
			return fmt.Errorf("UPLOAD_MAX_BYTES %q is not a number of bytes from 1 to %d", s, MaxUploadBytes)
		}
		c.UploadMaxBytes = n
	}
	c.SARIFInlineMax = MaxSARIFInlineBytes
	if s := getenv("SARIF_INLINE_MAX_BYTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxSARIFInlineBytes {
			return fmt.Errorf("SARIF_INLINE_MAX_BYTES %q is not a number of bytes from 1 to %d", s, MaxSARIFInlineBytes)
		}
		c.SARIFInlineMax = n
	}
	return nil
}

// loadSignIn reads the settings of signing in into c: whether the
// password form is on (PASSWORD_LOGIN) and single sign-on's provider
// (SSO_*), refusing a client secret in the environment.
func loadSignIn(c *Config, getenv func(string) string) error {
	switch getenv("PASSWORD_LOGIN") {
	case "", "true":
	case "false":
		c.PasswordLoginOff = true
	default:
		return fmt.Errorf("PASSWORD_LOGIN must be true or false")
	}
	c.SSO = SSO{Issuer: getenv("SSO_ISSUER"), ClientID: getenv("SSO_CLIENT_ID"), Claim: getenv("SSO_CLAIM"), Roles: getenv("SSO_ROLES"),
		ClientSecretID: getenv("SSO_CLIENT_SECRET_ID")}
	if getenv("SSO_CLIENT_SECRET") != "" {
		return fmt.Errorf("SSO_CLIENT_SECRET must not be set: the secret is read from Secrets Manager (SSO_CLIENT_SECRET_ID names it)") // never the value
	}
	return nil
}

// checkOrigin accepts an origin as a browser sends it: http or https,
// a host, an optional port, nothing else (no path, no trailing slash).
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return fmt.Errorf("DASHBOARD_ORIGIN %q is not an origin such as https://d111111abcdef8.cloudfront.net", s)
	}
	return nil
}

// Logger returns the JSON logger of the configured level writing to w.
func (c Config) Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel, ReplaceAttr: levelName}))
}

// levelName writes the level of metric lines (metrics.Level, above
// ERROR so that every LOG_LEVEL keeps them) as METRIC rather than ERROR+4.
func levelName(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok && l == metrics.Level {
			return slog.String(slog.LevelKey, "METRIC")
		}
	}
	return a
}

// SignIn is what the dashboard's config.json tells it about signing in:
// single sign-on's provider (none when AuthorizationEndpoint is empty)
// and whether the password form is shown.
type SignIn struct {
	// AuthorizationEndpoint is the provider's authorization endpoint (its
	// discovery document's authorization_endpoint), where the dashboard
	// sends a person with the authorization request.
	AuthorizationEndpoint string
	ClientID              string // scangate's client at the provider
	// Scope is what the dashboard asks for ("openid email profile" and the
	// role claim's scope when the provider needs one).
	Scope            string
	PasswordLoginOff bool
}
