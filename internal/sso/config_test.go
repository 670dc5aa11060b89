package sso_test

import (
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/sso"
)

// TestSettingsFromConfig: no issuer is no single sign-on; an issuer must
// be https (http only on a loopback host where loopback is allowed: the
// local stack), with a client id and a mapping that names a group; the
// mapping gives the highest role of a person's groups.
func TestSettingsFromConfig(t *testing.T) {
	roles := `{"admins":["sec-team"],"users":["developers"],"readonly":["auditors"]}`
	if s, err := sso.FromConfig(config.SSO{}, false); err != nil || s.Enabled() {
		t.Errorf("no issuer: %+v %v", s, err)
	}
	good := config.SSO{Issuer: "https://login.example.com", ClientID: "scangate", Roles: roles}
	s, err := sso.FromConfig(good, false)
	if err != nil || !s.Enabled() {
		t.Fatalf("a good configuration: %v", err)
	}
	for groups, want := range map[string]scangate.Role{"auditors,developers": scangate.RoleUser, "sec-team,auditors": scangate.RoleAdmin, "auditors": scangate.RoleReadonly} {
		if got, ok := s.Roles.Role(strings.Split(groups, ",")); !ok || got != want {
			t.Errorf("groups %s: %q %v, want %s", groups, got, ok, want)
		}
	}
	if got, ok := s.Roles.Role([]string{"marketing"}); ok {
		t.Errorf("a group nobody mapped gave %s", got)
	}
	bad := map[string]config.SSO{
		"http issuer":       {Issuer: "http://login.example.com", ClientID: "c", Roles: roles},
		"http loopback":     {Issuer: "http://127.0.0.1:8080", ClientID: "c", Roles: roles},
		"issuer with query": {Issuer: "https://login.example.com/?x=1", ClientID: "c", Roles: roles},
		"no client id":      {Issuer: "https://login.example.com", Roles: roles},
		"no mapping":        {Issuer: "https://login.example.com", ClientID: "c"},
		"empty mapping":     {Issuer: "https://login.example.com", ClientID: "c", Roles: `{"admins":[]}`},
		"unknown role":      {Issuer: "https://login.example.com", ClientID: "c", Roles: `{"owners":["x"]}`},
		"empty group":       {Issuer: "https://login.example.com", ClientID: "c", Roles: `{"admins":[""]}`},
	}
	for name, c := range bad {
		if _, err := sso.FromConfig(c, false); err == nil {
			t.Errorf("%s was accepted", name)
		}
	}
	if _, err := sso.FromConfig(config.SSO{Issuer: "http://127.0.0.1:8080", ClientID: "c", Roles: roles}, true); err != nil {
		t.Errorf("http loopback where loopback is allowed: %v", err)
	}
}
