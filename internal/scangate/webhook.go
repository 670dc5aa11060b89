package scangate

import (
	"slices"
	"time"
)

// MaxWebhooks bounds the subscriptions of a deployment: the dispatcher
// reads them all for every batch of events.
const MaxWebhooks = 100

// MaxWebhookDescription bounds a subscription's description, in characters.
const MaxWebhookDescription = 1000

// SecretOverlap is how long a rotated-out signing secret keeps signing
// beside the new one.
const SecretOverlap = 24 * time.Hour

// Webhook is a subscription: the events of the given types are delivered
// to its URL, signed with its secret. Secrets are held sealed (internal/seal);
// the store never sees them in plain text.
type Webhook struct {
	ID          int64
	URL         string
	Events      []string // event types, at least one
	Description string
	Active      bool
	// DisabledReason says why scangate disabled it (410, or 3 days of
	// failures); "" when it is active or an admin deactivated it.
	DisabledReason string
	// FailingSince is when its current streak of failed attempts began
	// (nil: its last attempt was delivered).
	FailingSince *Time
	CreatedBy    int64
	CreatedAt    Time
	UpdatedBy    int64
	UpdatedAt    Time
	// Secret is the sealed signing secret; Previous the sealed secret it
	// replaced, which keeps signing until PreviousUntil.
	Secret        string
	Previous      string
	PreviousUntil *Time
}

// Wants reports whether the subscription takes events of type t.
func (w Webhook) Wants(t string) bool { return slices.Contains(w.Events, t) }

// Secrets are the sealed secrets that sign a delivery at now: the current
// one, then the previous one while it is live.
func (w Webhook) Secrets(now time.Time) []string {
	if w.Previous != "" && w.PreviousUntil != nil && now.Before(w.PreviousUntil.Time) {
		return []string{w.Secret, w.Previous}
	}
	return []string{w.Secret}
}

// WebhookChange is a PATCH of a subscription: nil members are unchanged.
type WebhookChange struct {
	URL         *string
	Events      *[]string
	Description *string
	Active      *bool
}

// ApplyTo returns w changed. Activating a subscription clears why it was
// disabled and its failure streak.
func (c WebhookChange) ApplyTo(w Webhook) Webhook {
	if c.URL != nil {
		w.URL = *c.URL
	}
	if c.Events != nil {
		w.Events = slices.Clone(*c.Events)
	}
	if c.Description != nil {
		w.Description = *c.Description
	}
	if c.Active != nil {
		if *c.Active && !w.Active {
			w.DisabledReason, w.FailingSince = "", nil
		}
		w.Active = *c.Active
	}
	return w
}

// WebhookView is a subscription as the API shows it: never a secret.
type WebhookView struct {
	ID             int64    `json:"id"`
	URL            string   `json:"url"`
	Events         []string `json:"events"`
	Description    string   `json:"description"`
	Active         bool     `json:"active"`
	DisabledReason *string  `json:"disabled_reason"`
	FailingSince   *Time    `json:"failing_since"`
	// SecretRotatedUntil is, after a rotation, until when the previous
	// secret also signs; null when only one secret signs.
	PreviousSecretUntil *Time `json:"previous_secret_until"`
	CreatedBy           int64 `json:"created_by"`
	CreatedAt           Time  `json:"created_at"`
	UpdatedBy           int64 `json:"updated_by"`
	UpdatedAt           Time  `json:"updated_at"`
}

// ViewWebhook is the view of a subscription at now.
func ViewWebhook(w Webhook, now time.Time) WebhookView {
	v := WebhookView{ID: w.ID, URL: w.URL, Events: NonNil(w.Events), Description: w.Description, Active: w.Active,
		FailingSince: w.FailingSince, CreatedBy: w.CreatedBy, CreatedAt: w.CreatedAt, UpdatedBy: w.UpdatedBy, UpdatedAt: w.UpdatedAt}
	if w.DisabledReason != "" {
		v.DisabledReason = &w.DisabledReason
	}
	if len(w.Secrets(now)) == 2 {
		v.PreviousSecretUntil = w.PreviousUntil
	}
	return v
}

// Integration is a version-control system's status API for a vc_id, as an
// admin configures it (PUT /integrations/{vc_id}). Its token is held
// sealed.
type Integration struct {
	VcID   int64
	Type   string // github, github_app, gitlab
	APIURL string
	Token  string // sealed: the access token, or a GitHub App's private key
	// AppID and InstallationID name a GitHub App and its installation
	// (github_app only; 0 otherwise).
	AppID, InstallationID int64
	UpdatedBy             int64
	UpdatedAt             Time
}

// IntegrationGitHubApp is the type of a GitHub App installation's
// integration.
const IntegrationGitHubApp = "github_app"

// IntegrationView is an integration as the API shows it: whether a token
// is set, never the token.
type IntegrationView struct {
	VcID     int64  `json:"vc_id"`
	Type     string `json:"type"`
	APIURL   string `json:"api_url"`
	TokenSet bool   `json:"token_set"`
	// AppID and InstallationID are shown for a GitHub App (github_app),
	// whose private key is never shown (token_set says it is set).
	AppID          *int64 `json:"app_id,omitempty"`
	InstallationID *int64 `json:"installation_id,omitempty"`
	UpdatedBy      int64  `json:"updated_by"`
	UpdatedAt      Time   `json:"updated_at"`
}

// ViewIntegration is the view of an integration.
func ViewIntegration(in Integration) IntegrationView {
	v := IntegrationView{VcID: in.VcID, Type: in.Type, APIURL: in.APIURL, TokenSet: in.Token != "",
		UpdatedBy: in.UpdatedBy, UpdatedAt: in.UpdatedAt}
	if in.Type == IntegrationGitHubApp {
		v.AppID, v.InstallationID = &in.AppID, &in.InstallationID
	}
	return v
}

// Destination is where a delivery goes: a webhook or the integration of a
// vc_id.
type Destination struct {
	Kind string // DestWebhook or DestIntegration
	ID   int64  // the webhook's id, or the vc_id
}

// The kinds of destination.
const (
	DestWebhook     = "webhook"
	DestIntegration = "integration"
)

// DeliveryStatus is where a delivery is.
type DeliveryStatus string

// A delivery is pending until it is delivered, fails for good (its
// attempts ran out, the receiver answered 410, a status post was refused),
// is cancelled (its destination was deleted or disabled before it was
// attempted again) or superseded (a newer gate's status was posted to the
// commit first).
const (
	DeliveryPending    DeliveryStatus = "pending"
	DeliveryDelivered  DeliveryStatus = "delivered"
	DeliveryFailed     DeliveryStatus = "failed"
	DeliveryCancelled  DeliveryStatus = "cancelled"
	DeliverySuperseded DeliveryStatus = "superseded"
)

// Attempt is the record of a delivery's latest attempt.
type Attempt struct {
	At         Time
	StatusCode int   // the receiver's answer; 0 when there was none
	DurationMS int64 // of the attempt
	Error      string
	Response   string // at most 1 KiB of the answer
}

// Delivery is one event for one destination; its id is the event's.
type Delivery struct {
	To        Destination
	EventID   string
	EventType string
	Status    DeliveryStatus
	Attempts  int   // attempts made
	Due       int64 // epoch ms when the next attempt is due, while pending
	Last      *Attempt
	CreatedAt Time
}

// DeliveryView is a delivery as GET /webhooks/{id}/deliveries lists it:
// the event, where the delivery is, and its latest attempt.
type DeliveryView struct {
	ID             string  `json:"id"`
	EventID        string  `json:"event_id"`
	Type           string  `json:"type"`
	Status         string  `json:"status"`
	Attempt        int     `json:"attempt"`
	CreatedAt      Time    `json:"created_at"`
	AttemptedAt    *Time   `json:"attempted_at"`
	NextAttemptAt  *Time   `json:"next_attempt_at"`
	ResponseStatus *int    `json:"response_status"`
	DurationMS     *int64  `json:"duration_ms"`
	Error          *string `json:"error"`
	Response       *string `json:"response"`
}

// ViewDelivery is the view of a delivery.
func ViewDelivery(d Delivery) DeliveryView {
	v := DeliveryView{ID: d.EventID, EventID: d.EventID, Type: d.EventType, Status: string(d.Status), Attempt: d.Attempts,
		CreatedAt: d.CreatedAt}
	if d.Status == DeliveryPending && d.Due > 0 {
		at := At(time.UnixMilli(d.Due))
		v.NextAttemptAt = &at
	}
	if a := d.Last; a != nil {
		v.AttemptedAt, v.DurationMS = &a.At, &a.DurationMS
		if a.StatusCode != 0 {
			v.ResponseStatus = &a.StatusCode
		}
		if a.Error != "" {
			v.Error = &a.Error
		}
		if a.StatusCode != 0 {
			v.Response = &a.Response
		}
	}
	return v
}
