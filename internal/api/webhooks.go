package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/seal"
)

// WebhookStore keeps webhook subscriptions and their deliveries.
type WebhookStore interface {
	AuthorityStore
	CreateWebhook(ctx context.Context, w scangate.Webhook, who scangate.Who, now time.Time) (scangate.Webhook, error)
	Webhook(ctx context.Context, id int64) (scangate.Webhook, error)
	WebhooksPage(ctx context.Context, limit int, after map[string]string) (scangate.Page[scangate.Webhook], error)
	UpdateWebhook(ctx context.Context, id int64, c scangate.WebhookChange, who scangate.Who, now time.Time) (scangate.Webhook, error)
	DeleteWebhook(ctx context.Context, id int64, who scangate.Who, now time.Time) error
	RotateWebhookSecret(ctx context.Context, id int64, sealed string, who scangate.Who, now time.Time) (scangate.Webhook, error)
	TestWebhook(ctx context.Context, id int64, who scangate.Who, now time.Time) (scangate.Event, error)
	DeliveriesPage(ctx context.Context, webhookID int64, limit int, after map[string]string) (scangate.Page[scangate.Delivery], error)
	Redeliver(ctx context.Context, webhookID int64, eventID string, who scangate.Who, now time.Time) (scangate.Delivery, error)
}

// Sealer seals the secrets the table keeps (*seal.Box).
type Sealer interface {
	Seal(purpose, plain string) (string, error)
}

var adminOnly = []scangate.Role{scangate.RoleAdmin}

// newWebhookBody is a new subscription, or one whose secret was rotated:
// the only answers that show its secret.
type newWebhookBody struct {
	scangate.WebhookView
	Secret string `json:"secret"`
}

// CreateWebhook is POST /webhooks: a subscription to the events of the
// given types, 201 with its signing secret, shown once. Its URL is checked
// by the outbound rules (and again at every connection).
func CreateWebhook(st WebhookStore, box Sealer, rules egress.Policy, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "CreateWebhook", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			ch, err := readWebhook(ctx, m, true, rules)
			if err != nil {
				return Reply{}, err
			}
			secret, sealed, err := newSecret(box)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			w, err := st.CreateWebhook(ctx, ch.ApplyTo(scangate.Webhook{Active: true, Secret: sealed}), whoOf(c, req), at)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Secret: true, Location: location(req, "/webhooks", w.ID),
				Body: newWebhookBody{scangate.ViewWebhook(w, at), secret}}, nil
		}}
}

// newSecret makes a signing secret and its sealed form.
func newSecret(box Sealer) (string, string, error) {
	secret, err := webhook.NewSecret(nil)
	if err != nil {
		return "", "", err
	}
	sealed, err := box.Seal(seal.WebhookSecret, secret)
	return secret, sealed, err
}

// readWebhook reads a subscription's body: on create url and events are
// required, active defaults to true; on update every member is optional.
// No member may be null.
func readWebhook(ctx context.Context, m members, create bool, rules egress.Policy) (scangate.WebhookChange, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var c scangate.WebhookChange
	if u, ok := f.str("url", create); ok {
		if parsed, err := rules.CheckURL(u); err != nil {
			p.Add("/url", "%s", err.Error())
		} else if err := rules.CheckName(ctx, parsed); err != nil {
			p.Add("/url", "%s", err.Error())
		} else {
			c.URL = &u
		}
	}
	if raw, ok := f.raw("events", create, false, "an array of event types"); ok {
		c.Events = readEventTypes(raw, &p)
	}
	if d, ok := f.str("description", false); ok {
		if utf8.RuneCountInString(d) > scangate.MaxWebhookDescription {
			p.Add("/description", "must be at most %d characters", scangate.MaxWebhookDescription)
		}
		c.Description = &d
	}
	if a, ok := f.boolean("active", false); ok {
		c.Active = &a
	}
	f.done()
	return c, p.Err()
}

// readEventTypes reads a non-empty array of distinct event types.
func readEventTypes(raw json.RawMessage, p *scangate.Problems) *[]string {
	var elems []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		p.Add("/events", "must be an array of event types")
		return nil
	}
	if len(elems) == 0 {
		p.Add("/events", "must name at least one event type: %s", strings.Join(scangate.EventTypes, ", "))
		return nil
	}
	types := make([]string, 0, len(elems))
	for i, e := range elems {
		var t string
		switch {
		case json.Unmarshal(e, &t) != nil:
			p.Add("/events/"+strconv.Itoa(i), "must be a string")
		case !scangate.KnownEvent(t):
			p.Add("/events/"+strconv.Itoa(i), "must be one of %s", strings.Join(scangate.EventTypes, ", "))
		case slices.Contains(types, t):
			p.Add("/events/"+strconv.Itoa(i), "repeats %s", t)
		default:
			types = append(types, t)
		}
	}
	return &types
}

// webhookID reads the path id of a subscription.
func webhookID(req events.APIGatewayProxyRequest) (int64, error) { return PathID(req, "webhook_id") }

// ListWebhooks is GET /webhooks: the subscriptions by id, never a secret.
func ListWebhooks(st WebhookStore, pg Cursors, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListWebhooks", Roles: adminOnly, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			r, err := pg.read(readQuery(req), "webhooks", nil)
			if err != nil {
				return Reply{}, err
			}
			ws, err := st.WebhooksPage(ctx, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			return replyPage(pg, req, "/api/webhooks", r, ws, func(w scangate.Webhook) scangate.WebhookView {
				return scangate.ViewWebhook(w, at)
			})
		}}
}

// GetWebhook is GET /webhooks/{webhook_id}.
func GetWebhook(st WebhookStore, now func() time.Time, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetWebhook", Roles: adminOnly, Log: log}, "webhook_id", st.Webhook, nil,
		func(w scangate.Webhook) scangate.WebhookView { return scangate.ViewWebhook(w, now()) })
}

// UpdateWebhook is PATCH /webhooks/{webhook_id}: the members sent change;
// activating a subscription that scangate disabled clears why.
func UpdateWebhook(st WebhookStore, rules egress.Policy, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "UpdateWebhook", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			ch, err := readWebhook(ctx, m, false, rules)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			w, err := st.UpdateWebhook(ctx, id, ch, whoOf(c, req), at)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewWebhook(w, at)}, nil
		}}
}

// DeleteWebhook is DELETE /webhooks/{webhook_id}: 204; its deliveries
// still pending are cancelled.
func DeleteWebhook(st WebhookStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "DeleteWebhook", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			if err := st.DeleteWebhook(ctx, id, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusNoContent}, nil
		}}
}

// testBody is the answer of POST /webhooks/{webhook_id}/test.
type testBody struct {
	EventID string `json:"event_id"`
	Type    string `json:"type"`
}

// TestWebhook is POST /webhooks/{webhook_id}/test: a webhook.test event
// for this subscription alone (active or not), delivered like any other;
// 202 with its id, which its delivery in GET .../deliveries carries.
func TestWebhook(st WebhookStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "TestWebhook", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			e, err := st.TestWebhook(ctx, id, whoOf(c, req), now())
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusAccepted, Body: testBody{EventID: e.ID, Type: e.Type}}, nil
		}}
}

// RotateWebhookSecret is POST /webhooks/{webhook_id}/rotate-secret: a new
// signing secret, shown once; the previous one keeps signing beside it
// for 24 hours (previous_secret_until), so receivers can switch.
func RotateWebhookSecret(st WebhookStore, box Sealer, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RotateWebhookSecret", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			secret, sealed, err := newSecret(box)
			if err != nil {
				return Reply{}, err
			}
			at := now()
			w, err := st.RotateWebhookSecret(ctx, id, sealed, whoOf(c, req), at)
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Secret: true, Body: newWebhookBody{scangate.ViewWebhook(w, at), secret}}, nil
		}}
}

// ListWebhookDeliveries is GET /webhooks/{webhook_id}/deliveries: the
// subscription's deliveries, newest first, each with its latest attempt.
func ListWebhookDeliveries(st WebhookStore, pg Cursors, log *slog.Logger) Endpoint {
	return Endpoint{Name: "ListWebhookDeliveries", Roles: adminOnly, Log: log,
		Run: func(ctx context.Context, _ scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			r, err := pg.read(readQuery(req), "deliveries", map[string]string{"webhook_id": strconv.FormatInt(id, 10)})
			if err != nil {
				return Reply{}, err
			}
			if _, err := st.Webhook(ctx, id); err != nil {
				return Reply{}, err
			}
			ds, err := st.DeliveriesPage(ctx, id, r.limit, r.after)
			if err != nil {
				return Reply{}, err
			}
			return replyPage(pg, req, fmt.Sprintf("/api/webhooks/%d/deliveries", id), r, ds, scangate.ViewDelivery)
		}}
}

// deliveryID reads the path id of a delivery: the ULID of its event.
func deliveryID(req events.APIGatewayProxyRequest) (string, error) {
	s := req.PathParameters["delivery_id"]
	if !validULID(s) {
		return "", &scangate.Error{Kind: scangate.KindInvalid, Detail: "the path id delivery_id must be a delivery's id (26 characters)",
			Fields: []scangate.FieldError{{Pointer: "/delivery_id", Detail: "must be a ULID, as the deliveries listing shows it"}}}
	}
	return s, nil
}

// validULID reports whether s is a ULID in Crockford's base32, upper case.
func validULID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", r) {
			return false
		}
	}
	return true
}

// RedeliverWebhookDelivery is POST
// /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver: the delivery
// is pending again with a new series of attempts, the same event id and
// body; 202 with the delivery.
func RedeliverWebhookDelivery(st WebhookStore, q deliverylane.Queues, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RedeliverWebhookDelivery", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := webhookID(req)
			if err != nil {
				return Reply{}, err
			}
			eventID, err := deliveryID(req)
			if err != nil {
				return Reply{}, err
			}
			d, err := st.Redeliver(ctx, id, eventID, whoOf(c, req), now())
			if err != nil {
				return Reply{}, err
			}
			// A failure here leaves the delivery pending and unqueued: the
			// caller's retry of this request queues it.
			if err := q.Send(ctx, deliverylane.Retry, deliverylane.Message(d.To, d.EventID), 0); err != nil {
				return Reply{}, scangate.Unavailable(err)
			}
			return Reply{Status: http.StatusAccepted, Body: scangate.ViewDelivery(d)}, nil
		}}
}

// IntegrationStore keeps the integrations of commit statuses.
type IntegrationStore interface {
	AuthorityStore
	Integration(ctx context.Context, vcID int64) (scangate.Integration, error)
	PutIntegration(ctx context.Context, in scangate.Integration, who scangate.Who, now time.Time) (scangate.Integration, error)
	DeleteIntegration(ctx context.Context, vcID int64, who scangate.Who, now time.Time) error
}

// MaxIntegrationToken bounds an integration's token, in bytes.
const MaxIntegrationToken = 1024

// PutIntegration is PUT /integrations/{vc_id}: {"type","api_url","token"}
// for the commit statuses of that vc_id's pull requests, or, for a GitHub
// App's installation, {"type":"github_app","api_url","app_id",
// "private_key","installation_id"}. The token or key is sealed before it
// is stored and never shown again; a PUT without one keeps the stored one
// (unless the type changes). The API's URL passes the outbound rules for
// integrations (which may allow private addresses: GitHub Enterprise
// Server).
func PutIntegration(st IntegrationStore, box Sealer, rules egress.Policy, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "PutIntegration", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			vcID, err := PathID(req, "vc_id")
			if err != nil {
				return Reply{}, err
			}
			in, token, err := readIntegration(m, rules)
			if err != nil {
				return Reply{}, err
			}
			in.VcID = vcID
			if token != "" {
				if in.Token, err = box.Seal(seal.IntegrationToken, token); err != nil {
					return Reply{}, err
				}
			}
			in, err = st.PutIntegration(ctx, in, whoOf(c, req), now())
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewIntegration(in)}, nil
		}}
}

// integrationTypes are the kinds of integration (commitstatus.Types,
// written here so that the API links no provider's client).
var integrationTypes = map[string]string{"github": "https://api.github.com", "gitlab": "https://gitlab.com/api/v4",
	"github_app": "https://api.github.com"}

func readIntegration(m members, rules egress.Policy) (scangate.Integration, string, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	var in scangate.Integration
	in.Type, _ = f.enum("type", true, []string{"github", "github_app", "gitlab"})
	if u, ok := f.str("api_url", false); ok {
		if _, err := rules.CheckAPIURL(u); err != nil {
			p.Add("/api_url", "%s", err.Error())
		}
		in.APIURL = strings.TrimRight(u, "/")
	} else {
		in.APIURL = integrationTypes[in.Type]
	}
	var ids [2]int64
	var given [3]bool // app_id, installation_id, private_key
	for i, name := range []string{"app_id", "installation_id"} {
		v, ok := f.integer(name, in.Type == scangate.IntegrationGitHubApp)
		given[i] = ok
		if ok && v < 1 {
			p.Add("/"+name, "must be a positive integer")
		}
		ids[i] = v
	}
	key, hasKey := f.str("private_key", false)
	given[2] = hasKey
	token, hasToken := f.str("token", false)
	if in.Type == scangate.IntegrationGitHubApp {
		in.AppID, in.InstallationID = ids[0], ids[1]
		if hasKey {
			if err := scangate.CheckAppKey(key); err != nil {
				p.Add("/private_key", "%s", err.Error())
			}
		}
		if hasToken {
			p.Add("/token", "is not taken by a github_app integration: it mints installation tokens with private_key")
		}
		token = key
	} else {
		for i, name := range []string{"app_id", "installation_id", "private_key"} {
			if given[i] {
				p.Add("/"+name, "is taken by a github_app integration only")
			}
		}
		if hasToken && (token == "" || len(token) > MaxIntegrationToken || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' })) {
			// It goes into an Authorization header.
			p.Add("/token", "must be 1 to %d printable ASCII characters, without white space", MaxIntegrationToken)
		}
	}
	f.done()
	return in, token, p.Err()
}

// GetIntegration is GET /integrations/{vc_id}: its type, API URL and
// whether a token is set, never the token.
func GetIntegration(st IntegrationStore, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetIntegration", Roles: adminOnly, Log: log}, "vc_id", st.Integration, nil, scangate.ViewIntegration)
}

// DeleteIntegration is DELETE /integrations/{vc_id}: 204; gate changes of
// that vc_id's pull requests are no longer posted, and its statuses still
// pending are cancelled.
func DeleteIntegration(st IntegrationStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "DeleteIntegration", Roles: adminOnly, Users: st, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			vcID, err := PathID(req, "vc_id")
			if err != nil {
				return Reply{}, err
			}
			if err := st.DeleteIntegration(ctx, vcID, whoOf(c, req), now()); err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusNoContent}, nil
		}}
}
