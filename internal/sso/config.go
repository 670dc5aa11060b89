package sso

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/egress"
)

// Timeout bounds each request to the provider (discovery, keys, the
// code's exchange).
const Timeout = 10 * time.Second

// FromConfig reads the settings of config.SSO: none when SSO_ISSUER is
// empty; else an https issuer URL (http only for a loopback host when
// loopback is allowed: the local stack and tests), a client id and a
// mapping that names at least one group.
func FromConfig(c config.SSO, loopback bool) (Settings, error) {
	if c.Issuer == "" {
		return Settings{}, nil
	}
	// The egress rules the provider is reached through (sso.Open's client).
	if _, err := (egress.Policy{LoopbackHTTP: loopback}).CheckAPIURL(c.Issuer); err != nil {
		return Settings{}, fmt.Errorf("SSO_ISSUER %q: %w", c.Issuer, err)
	}
	if c.ClientID == "" {
		return Settings{}, errors.New("SSO_ISSUER is set, SSO_CLIENT_ID is not")
	}
	m, err := ParseMapping(c.Roles)
	if err != nil {
		return Settings{}, fmt.Errorf("SSO_ROLES: %w", err)
	}
	return Settings{Issuer: c.Issuer, ClientID: c.ClientID, Claim: c.Claim, Roles: m}, nil
}

// New is the session of a deployment's configuration, with the client's
// secret read by secret and the provider reached through client. A
// configuration that does not read is an error, and the session then
// answers it (500) to every sign-in rather than sign anyone in wrongly.
func New(c config.Config, secret func(context.Context) (string, error), client *http.Client, st Store, fold func(string) string, now func() time.Time) (*Session, error) {
	settings, err := FromConfig(c.SSO, c.LoopbackHTTP)
	return &Session{Settings: settings, Secret: secret, HTTP: client, Store: st, Fold: fold, TTL: c.TokenTTL, Now: now, broken: err}, err
}

// Open is New for a function's main: a broken configuration (single
// sign-on off included) is answered to every sign-in rather than stopping
// the function.
func Open(c config.Config, secret func(context.Context) (string, error), client *http.Client, st Store, fold func(string) string, now func() time.Time) *Session {
	s, _ := New(c, secret, client, st, fold, now)
	return s
}
