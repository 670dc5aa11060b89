package scangate

import (
	"slices"
	"time"
)

// The audited actions.
const (
	AuditUserCreate      = "user.create"
	AuditUserUpdate      = "user.update"
	AuditAllowlistCreate = "allowlist.create"
	AuditAllowlistUpdate = "allowlist.update"
	AuditAllowlistExpire = "allowlist.expire"
	AuditTokenCreate     = "token.create"
	AuditTokenRevoke     = "token.revoke"
	AuditLoginFailure    = "login.failure"
	AuditLoginThrottled  = "login.throttled"
	AuditAdminBootstrap  = "admin.bootstrap"
	AuditScanRecord      = "scan.record"
	AuditPolicyUpdate    = "gate.policy.update"
	// Webhooks and integrations (events, docs/API.md).
	AuditWebhookCreate     = "webhook.create"
	AuditWebhookUpdate     = "webhook.update"
	AuditWebhookDelete     = "webhook.delete"
	AuditWebhookRotate     = "webhook.rotate"
	AuditWebhookTest       = "webhook.test"
	AuditWebhookRedeliver  = "webhook.redeliver"
	AuditIntegrationUpdate = "integration.update"
	AuditIntegrationDelete = "integration.delete"
	// Trusted CI (POST /auth/oidc/token).
	AuditOIDCTrustPut    = "oidc.trust.put"
	AuditOIDCTrustDelete = "oidc.trust.delete"
)

// AuditActions lists every action, for validating filters.
var AuditActions = []string{AuditUserCreate, AuditUserUpdate, AuditAllowlistCreate, AuditAllowlistUpdate,
	AuditAllowlistExpire, AuditTokenCreate, AuditTokenRevoke, AuditLoginFailure, AuditLoginThrottled, AuditAdminBootstrap,
	AuditScanRecord, AuditPolicyUpdate,
	AuditWebhookCreate, AuditWebhookUpdate, AuditWebhookDelete, AuditWebhookRotate, AuditWebhookTest, AuditWebhookRedeliver,
	AuditIntegrationUpdate, AuditIntegrationDelete, AuditOIDCTrustPut, AuditOIDCTrustDelete}

// LoginAction reports whether an action is one of unauthenticated traffic
// (failed and throttled logins), kept apart from the change log.
func LoginAction(a string) bool { return a == AuditLoginFailure || a == AuditLoginThrottled }

// Actor is who made a change: a user and the token it used (0 when the
// change did not come through a token, as a login's own).
type Actor struct {
	UserID   int64
	Username string
	TokenID  int64
}

// Who is the source of a change, for its audit entry: the actor (nil for
// the system and for failed logins) and the request that made it.
type Who struct {
	Actor     *Actor
	RequestID string // "cli-..." for the admin CLI
	SourceIP  string
}

// Target is what an audit entry is about.
type Target struct {
	Type string // one of AuditTargetTypes
	ID   string
}

// AuditTargetTypes lists what audit entries are about: a gate policy's id
// is "global" or the repository's id.
var AuditTargetTypes = []string{"user", "allowlist", "token", "username", "scan", "gate_policy", "webhook", "integration", "oidc_trust"}

// Change is one field's old and new value; a long list of ids is told as
// the ids added and removed.
type Change struct {
	From    any     `json:"from,omitempty"`
	To      any     `json:"to,omitempty"`
	Added   []int64 `json:"added,omitempty"`
	Removed []int64 `json:"removed,omitempty"`
}

// AuditEntry is one entry of the audit log.
type AuditEntry struct {
	ID      string // unique and time-ordered (a ULID)
	At      Time
	Action  string
	Who     Who
	Target  Target
	Changes map[string]Change
}

// longList is the length past which a list's change is told as ids added
// and removed.
const longList = 10

// Changes collects the changes of one update.
type Changes map[string]Change

// Set records a field's change when from and to differ (compared as
// given: strings, booleans, numbers).
func (c Changes) Set(field string, from, to any) {
	if from != to {
		c[field] = Change{From: from, To: to}
	}
}

// IDs records a change of a list of ids: whole when short, as ids added
// and removed when long.
func (c Changes) IDs(field string, from, to []int64) {
	if slices.Equal(from, to) {
		return
	}
	if len(from) <= longList && len(to) <= longList {
		c[field] = Change{From: orEmpty(from), To: orEmpty(to)}
		return
	}
	var ch Change
	for _, id := range to {
		if !slices.Contains(from, id) {
			ch.Added = append(ch.Added, id)
		}
	}
	for _, id := range from {
		if !slices.Contains(to, id) {
			ch.Removed = append(ch.Removed, id)
		}
	}
	c[field] = ch
}

func orEmpty(l []int64) []int64 {
	if l == nil {
		return []int64{}
	}
	return l
}

// NewAudit builds an entry of the action at the time, with id set by the
// store.
func NewAudit(action string, who Who, target Target, changes Changes, at time.Time) AuditEntry {
	return AuditEntry{At: At(at), Action: action, Who: who, Target: target, Changes: changes}
}

// AuditFilter selects audit entries.
type AuditFilter struct {
	Action     string
	ActorID    int64
	TargetType string
	TargetID   string
	Since      time.Time // inclusive, zero for none
	Until      time.Time // exclusive, zero for none
}
