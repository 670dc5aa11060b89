// Package webhook delivers scangate's events to the URLs subscribed to
// them, as the Standard Webhooks specification describes: a JSON body
// signed with HMAC-SHA256 in the webhook-id, webhook-timestamp and
// webhook-signature headers. It makes one attempt at a time (POST, 10 s,
// no redirects, through the egress rules) and says what became of it; the
// caller keeps the delivery's state and asks Backoff when to try again and
// ShouldDisable whether a failing subscription must stop.
package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/scangate/scangate/internal/scangate"
)

// Event is what a delivery carries (its types are scangate.EventTypes): its
// body is
// {"id","type","occurred_at","data":{...}}, where data is the resource as
// its GET route shows it, never a secret.
type Event struct {
	ID         string          `json:"id"` // a ULID; the webhook-id header too
	Type       string          `json:"type"`
	OccurredAt scangate.Time   `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

// Body is the event as it is sent: compact JSON, with <, > and & as they
// are (no \u003c escapes: a body is at most the size of its data and
// what surrounds it). The same event always gives the same bytes, so a
// retry carries the body its signature covered.
func (e Event) Body() ([]byte, error) {
	if e.ID == "" || e.Type == "" {
		return nil, fmt.Errorf("event %q of type %q: id and type are required", e.ID, e.Type)
	}
	if !json.Valid(e.Data) {
		return nil, fmt.Errorf("event %s: data is not JSON", e.ID)
	}
	b, err := scangate.PlainJSON(e)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e.ID, err)
	}
	return b, nil
}
