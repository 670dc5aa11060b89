package scangate

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The event types (docs/API.md, Events).
const (
	EventGateChanged       = "pr.gate_changed"
	EventScanRecorded      = "scan.recorded"
	EventUploadCompleted   = "upload.completed"
	EventUploadFailed      = "upload.failed"
	EventAllowlistCreated  = "allowlist.created"
	EventAllowlistUpdated  = "allowlist.updated"
	EventAllowlistExpired  = "allowlist.expired"
	EventAllowlistExpiring = "allowlist.expiring"
	EventWebhookTest       = "webhook.test"
)

// EventTypes lists every event type, in the order the documentation gives
// them.
var EventTypes = []string{EventGateChanged, EventScanRecorded, EventUploadCompleted, EventUploadFailed,
	EventAllowlistCreated, EventAllowlistUpdated, EventAllowlistExpired, EventAllowlistExpiring, EventWebhookTest}

// KnownEvent reports whether t is an event type.
func KnownEvent(t string) bool { return slices.Contains(EventTypes, t) }

// Event is a change that leaves scangate: written by the store in the
// transaction of the change (the outbox), then put on the event bus and
// delivered to the webhooks and integrations it concerns. Its body is
// {"id","type","occurred_at","data"}.
type Event struct {
	ID         string // a ULID, given by the store when it writes the event
	Type       string
	OccurredAt Time
	// Data is the resource as its GET route shows it, never a secret.
	Data json.RawMessage
	// Webhook, when not 0, is the one subscription the event goes to
	// (webhook.test), whatever the subscription's event types; other
	// events go to every active subscription of their type.
	Webhook int64
}

// NewEvent makes an event of type typ that occurred at at, with data
// (a view of this package, or any plain value) as its JSON.
func NewEvent(typ string, at time.Time, data any) Event {
	b, err := PlainJSON(data)
	if err != nil {
		// The views hold strings, numbers and times only.
		panic(fmt.Sprintf("event %s: %v", typ, err))
	}
	return Event{Type: typ, OccurredAt: At(at), Data: b}
}

// AllowlistView is an allowlist as GET /whitelist lists it and as the
// allowlist.* events carry it: every member of GET /whitelist/{id}, with
// comments as the ids of the comments (GET /whitelist/{id} shows them as
// objects: Comments holds either).
type AllowlistView struct {
	ID     int64    `json:"id"`
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Active bool     `json:"active"`
	Global bool     `json:"global_"`
	Repos  []int64  `json:"repos"`
	Vcs    []int64  `json:"vcs"`
	Paths  []string `json:"paths"`
	// Fingerprints: the only findings' fingerprints it covers; [] when any.
	Fingerprints []string `json:"fingerprints"`
	Reason       *string  `json:"reason"`
	ExpiresAt    *Time    `json:"expires_at"`
	Expired      bool     `json:"expired"`
	Comments     any      `json:"comments"`
	CreatedBy    int64    `json:"created_by"`
	CreatedOn    Time     `json:"created_on"`
	UpdatedBy    int64    `json:"updated_by"`
	UpdatedOn    Time     `json:"updated_on"`
}

// ViewAllowlist is the view of an allowlist at now (whether it has expired
// depends on it), with its comment ids; the caller may replace Comments.
func ViewAllowlist(a Allowlist, now time.Time) AllowlistView {
	v := AllowlistView{
		ID: a.ID, Type: string(a.Rule.Type), Name: a.Rule.Name, Active: a.Rule.Active, Global: a.Rule.Global,
		Repos: NonNil(a.Rule.Repos), Vcs: NonNil(a.Rule.Vcs), Paths: NonNil(a.Rule.Paths), Fingerprints: NonNil(a.Rule.Fingerprints), Comments: NonNil(a.Comments),
		ExpiresAt: a.ExpiresAt, Expired: a.Expired(now),
		CreatedBy: a.CreatedBy, CreatedOn: a.CreatedOn, UpdatedBy: a.UpdatedBy, UpdatedOn: a.UpdatedOn,
	}
	if a.Reason != "" {
		v.Reason = &a.Reason
	}
	return v
}

// UploadView is a large SARIF upload as GET /pr/scan/sarif/uploads/{id}
// shows it and as the upload.* events carry it.
type UploadView struct {
	ID                 int64     `json:"id"`
	Status             string    `json:"status"`
	Errors             []Problem `json:"errors"`
	ScanIDs            []int64   `json:"scan_ids"`
	Results            int       `json:"results"`
	Recorded           int       `json:"recorded"`
	SuppressedInSource int       `json:"suppressed_in_source"`
	Skipped            int       `json:"skipped"`
	CreatedAt          Time      `json:"created_at"`
	CompletedAt        *Time     `json:"completed_at"`
}

// ViewUpload is the view of an upload.
func ViewUpload(u Upload) UploadView {
	return UploadView{ID: u.ID, Status: string(u.Status), Errors: NonNil(u.Errors), ScanIDs: NonNil(u.ScanIDs),
		Results: u.Results, Recorded: u.Recorded, SuppressedInSource: u.SuppressedInSource, Skipped: u.Skipped,
		CreatedAt: u.CreatedAt, CompletedAt: u.CompletedAt}
}

// NonNil is l, or an empty slice (JSON []) for nil.
func NonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
