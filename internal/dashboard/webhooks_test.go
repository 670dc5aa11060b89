package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/scangate/scangate/internal/scangate"
)

// receiver is a webhook receiver on loopback (the local stack allows http
// there): it answers 500 while failing, else 200, and checks each
// delivery's signatures against the secrets the dashboard showed.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	failing bool
	secrets []string   // shown by the dashboard, oldest first
	got     []received // every request, in order
}

// received is one request: its event's id and type, what it was
// answered, and which of the secrets (their indexes) signed it.
type received struct {
	ID, Type string
	Status   int
	SignedBy []int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var e struct{ ID, Type string }
	_ = json.Unmarshal(body, &e)
	r.mu.Lock()
	defer r.mu.Unlock()
	got := received{ID: e.ID, Type: e.Type, Status: http.StatusOK}
	for i, s := range r.secrets {
		if wh, err := standardwebhooks.NewWebhook(s); err == nil && wh.Verify(body, req.Header) == nil {
			got.SignedBy = append(got.SignedBy, i)
		}
	}
	if r.failing {
		got.Status = http.StatusInternalServerError
	}
	r.got = append(r.got, got)
	w.WriteHeader(got.Status)
	if r.failing {
		_, _ = io.WriteString(w, "the receiver is down <b>for maintenance</b>")
		return
	}
	_, _ = fmt.Fprintf(w, `{"received":%q}`, e.ID)
}

func (r *receiver) trust(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

func (r *receiver) fail(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing = on
}

// requests are the requests made for an event, in order.
func (r *receiver) requests(id string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.ID == id {
			out = append(out, g)
		}
	}
	return out
}

// settle waits until the local stack has dispatched every event and no
// delivery is in flight or due (a retry waiting for its time may be).
func (b *browser) settle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Minute) // a bound on a hang, not a timing
	defer cancel()
	if err := b.stack.Settled(ctx); err != nil {
		t.Fatal(err)
	}
}

// button is the page's button that says text.
func button(text string) chromedp.JSPath {
	return chromedp.JSPath(fmt.Sprintf(`[...document.querySelectorAll('main button')].filter((b) => b.textContent === %q)`, text))
}

// nowhere checks that a secret is not in the page (its markup or a
// control's value), its address, or the tab's storage.
func (b *browser) nowhere(t *testing.T, what, secret string) {
	t.Helper()
	where := eval[[]string](t, b, fmt.Sprintf(`(() => { const s = %q; const out = [];
		if (document.documentElement.outerHTML.includes(s)) out.push('the markup');
		if ([...document.querySelectorAll('input, textarea')].some((c) => c.value.includes(s))) out.push('a control');
		if (location.href.includes(s)) out.push('the address');
		for (const st of [sessionStorage, localStorage]) for (let i = 0; i < st.length; i++) if (st.getItem(st.key(i)).includes(s)) out.push('storage');
		return out; })()`, secret))
	if len(where) > 0 {
		t.Errorf("the %s is in %v", what, where)
	}
}

// delivery is a row of a webhook's deliveries as the page shows it.
type delivery struct {
	Event, Status, Attempt, Response, Duration, Next, Error string
}

func (b *browser) deliveries(t *testing.T) []delivery {
	t.Helper()
	return eval[[]delivery](t, b, `[...document.querySelectorAll('main table.deliveries tbody tr')].map((tr) => { const c = [...tr.cells].map((td) => td.textContent);
		return {event: tr.cells[0].querySelector('.mono').textContent + ' ' + tr.cells[0].querySelector('.small').textContent, status: c[1], attempt: c[2],
			response: c[4], duration: c[5], next: c[6], error: tr.cells[7].querySelector('.error')?.textContent ?? ''}; })`)
}

// newest is a webhook's newest delivery as the API shows it.
func newest(t *testing.T, api, token, webhookID string) (status string, attempt int, next time.Time) {
	t.Helper()
	code, body := call(t, "GET", api+"/webhooks/"+webhookID+"/deliveries?limit=1", token, "")
	var page struct {
		Items []struct {
			Status        string     `json:"status"`
			Attempt       int        `json:"attempt"`
			NextAttemptAt *time.Time `json:"next_attempt_at"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil || len(page.Items) != 1 {
		t.Fatalf("deliveries: %d %s", code, body)
	}
	d := page.Items[0]
	if d.NextAttemptAt != nil {
		next = *d.NextAttemptAt
	}
	return d.Status, d.Attempt, next
}

var eventID = regexp.MustCompile(`\(([0-9A-Z]{26})\)`)

// webhookSteps go through the admin's webhook and integration pages: a
// webhook to a receiver on loopback created (its secret shown once, and
// kept nowhere), a test event delivered and signed with that secret, the
// secret rotated (shown once), a delivery failing until its attempts run
// out (the stack's clock moved to each retry) and redelivered, the webhook
// changed, deleted after a confirmation, and its audit trail; an
// integration's token set (a password field) and never shown back, and
// kept when the integration changes without one. The secrets and the
// token are added to secrets, which the last step looks for in every URL
// and log line.
func webhookSteps(t *testing.T, b *browser, admin string, secrets *[]string) []step {
	recv := newReceiver(t)
	var id, secret, rotated string
	return []step{
		{"webhooks", func(t *testing.T) {
			b.act(t, "webhooks", chromedp.Click(chromedp.CSS(`#nav a[href="#/webhooks"]`)))
			if got := b.text(t, "h1") + " / " + b.text(t, "main .empty"); got != "Webhooks / No webhook." {
				t.Errorf("the webhooks page: %q", got)
			}
			if got := eval[[]string](t, b, `[...document.querySelectorAll('input[name=wh-events]')].map((c) => c.value)`); !slices.Equal(got, scangate.EventTypes) {
				t.Errorf("the form offers the events %q; the API takes %q", got, scangate.EventTypes)
			}
			b.page(t, "webhooks")
			submit := chromedp.Click(chromedp.CSS("form.webhook-form button[type=submit]"))
			// No event chosen: the form says so, and sends nothing.
			b.do(t, chromedp.SendKeys(chromedp.ID("wh-url"), recv.srv.URL+"/hook"), submit, chromedp.WaitVisible(chromedp.ID("wh-events-error")))
			if got := eval[string](t, b, `document.activeElement.id + ': ' + document.getElementById('wh-events-error').textContent`); got != "wh-ev-pr-gate-changed: Choose at least one event." {
				t.Errorf("without an event, the focus and the error: %q", got)
			}
			// An address the API refuses (a private one): its error on the field.
			b.do(t, chromedp.SetValue(chromedp.ID("wh-url"), "https://10.1.2.3/hook"), chromedp.Click(chromedp.ID("wh-ev-allowlist-created")),
				submit, chromedp.WaitVisible(chromedp.ID("wh-url-error")))
			if got := eval[string](t, b, `document.getElementById('wh-url').getAttribute('aria-invalid') + ' ' + document.getElementById('wh-url-error').textContent`); !strings.HasPrefix(got, "true ") || !strings.Contains(got, "10.1.2.3") {
				t.Errorf("the refused address: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/webhooks", admin, ""); body != `{"items":[],"next_cursor":null}` {
				t.Errorf("a webhook was created: %s", body)
			}
			b.page(t, "webhook-refused-address")
			// The receiver: created, its secret shown once.
			b.do(t, chromedp.SetValue(chromedp.ID("wh-url"), recv.srv.URL+"/hook"), chromedp.Click(chromedp.ID("wh-ev-allowlist-updated")),
				chromedp.SendKeys(chromedp.ID("wh-description"), "The payments team's triage bot"), submit, chromedp.WaitVisible(chromedp.ID("wh-secret")),
				void(chromedp.Poll[bool](`document.querySelectorAll('main tbody tr').length === 1`, chromedp.WithPollingTimeout(0))))
			secret = eval[string](t, b, `document.getElementById('wh-secret').value`)
			if !strings.HasPrefix(secret, "whsec_") || eval[string](t, b, `document.activeElement.id`) != "wh-secret" {
				t.Fatalf("the secret shown: %q, focused: %s", secret, eval[string](t, b, `document.activeElement.id`))
			}
			*secrets = append(*secrets, secret)
			recv.trust(secret)
			if got := b.text(t, "[role=status]"); !strings.Contains(got, "Copy its signing secret now: it is not shown again.") {
				t.Errorf("the creation's message: %q", got)
			}
			id = eval[string](t, b, `document.querySelector('[role=status] a').getAttribute('href').split('/').pop()`)
			_, body := call(t, "GET", b.api+"/webhooks/"+id, admin, "")
			for _, want := range []string{`"url":"` + recv.srv.URL + `/hook"`, `"events":["allowlist.created","allowlist.updated"]`,
				`"description":"The payments team's triage bot"`, `"active":true`} {
				if !strings.Contains(body, want) || strings.Contains(body, secret) {
					t.Errorf("the webhook stored lacks %s (or shows its secret): %s", want, body)
				}
			}
			if got := eval[[]string](t, b, `[...document.querySelector('main tbody tr').cells].map((c) => c.textContent)`); len(got) != 6 || got[0] != "#"+id || got[4] != "Active" {
				t.Errorf("the webhook's row: %q", got)
			}
			if got := eval[string](t, b, `location.href + ' ' + sessionStorage.length + ' ' + localStorage.length`); strings.Contains(got, secret) || !strings.HasSuffix(got, "#/webhooks 2 0") {
				t.Errorf("the address and the storage: %q", got)
			}
			b.page(t, "webhook-created")
			// Its page: the secret is gone with the page that showed it.
			b.act(t, "webhook", chromedp.Click(chromedp.CSS("[role=status] a")))
			b.nowhere(t, "webhook's secret", secret)
			if got := b.text(t, "h1") + " " + b.text(t, ".lead"); got != "Webhook #"+id+" Active · "+recv.srv.URL+"/hook" {
				t.Errorf("the webhook's page: %q", got)
			}
			b.page(t, "webhook")
		}},
		{"webhook test delivered, secret rotated", func(t *testing.T) {
			b.act(t, "webhook", chromedp.Click(button("Send a test event")))
			m := eventID.FindStringSubmatch(b.text(t, "[role=status]"))
			if m == nil {
				t.Fatalf("the test's message: %q", b.text(t, "[role=status]"))
			}
			b.settle(t)
			b.act(t, "webhook", chromedp.Click(button("Refresh the deliveries")))
			got := b.deliveries(t)
			want := delivery{Event: "webhook.test " + m[1], Status: "delivered", Attempt: "1", Response: "200", Duration: "… ms", Next: "—", Error: ""}
			if len(got) == 1 && regexp.MustCompile(`^[0-9]+ ms$`).MatchString(got[0].Duration) {
				want.Duration = got[0].Duration
			}
			if len(got) != 1 || got[0] != want {
				t.Errorf("the deliveries: %+v; want %+v", got, want)
			}
			if got := recv.requests(m[1]); len(got) != 1 || !slices.Equal(got[0].SignedBy, []int{0}) {
				t.Errorf("the receiver got %+v; want one request signed with the secret shown", got)
			}
			b.do(t, chromedp.Click(chromedp.CSS("details.answer summary")), chromedp.WaitVisible(chromedp.CSS("details.answer pre")))
			if got := b.text(t, "details.answer pre"); got != `{"received":"`+m[1]+`"}` {
				t.Errorf("the receiver's answer shows as %q", got)
			}
			b.page(t, "webhook-delivered")
			// A new secret, shown once; the previous one signs for 24 hours.
			b.do(t, chromedp.Click(button("Rotate the secret")), chromedp.WaitVisible(chromedp.ID("wh-new-secret")))
			rotated = eval[string](t, b, `document.getElementById('wh-new-secret').value`)
			if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
				t.Fatalf("the new secret shown: %q", rotated)
			}
			*secrets = append(*secrets, rotated)
			recv.trust(rotated)
			if got := b.text(t, "[role=status]"); !strings.Contains(got, "Copy the new one now: it is not shown again.") {
				t.Errorf("the rotation's message: %q", got)
			}
			if got := b.text(t, "dl.facts"); !strings.Contains(got, "Signing secretRotated: the previous secret also signs until ") {
				t.Errorf("the webhook's facts after the rotation: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/webhooks/"+id, admin, ""); strings.Contains(body, `"previous_secret_until":null`) || strings.Contains(body, rotated) {
				t.Errorf("after the rotation: %s", body)
			}
			b.page(t, "webhook-secret-rotated")
		}},
		{"webhook delivery failed and redelivered", func(t *testing.T) {
			recv.fail(true)
			b.act(t, "webhook", chromedp.Click(button("Send a test event")))
			b.nowhere(t, "rotated secret", rotated) // gone with the page that showed it
			m := eventID.FindStringSubmatch(b.text(t, "[role=status]"))
			if m == nil {
				t.Fatalf("the test's message: %q", b.text(t, "[role=status]"))
			}
			b.settle(t)
			b.act(t, "webhook", chromedp.Click(button("Refresh the deliveries")))
			if got := b.deliveries(t); len(got) != 2 || got[0].Status != "pending" || got[0].Response != "500" || got[0].Next == "—" ||
				got[0].Error != "the receiver answered 500" {
				t.Errorf("the failing delivery: %+v", got)
			}
			if got := b.text(t, ".failing"); !strings.HasPrefix(got, "Its attempts have failed since ") {
				t.Errorf("the failing webhook's state: %q", got)
			}
			if got := recv.requests(m[1]); len(got) == 0 || !slices.Equal(got[0].SignedBy, []int{0, 1}) {
				t.Errorf("the receiver got %+v; want each request signed with both secrets", got)
			}
			b.page(t, "webhook-failing")
			// Its attempts run out: the stack's clock is moved to each retry's time.
			for range 12 {
				b.settle(t)
				status, _, next := newest(t, b.api, admin, id)
				if status != "pending" {
					break
				}
				b.clock.advance(max(next.Sub(b.clock.Now()), 0) + time.Second)
			}
			b.act(t, "webhook", chromedp.Click(button("Refresh the deliveries")))
			if got := b.deliveries(t); got[0].Status != "failed" || got[0].Attempt != "8" || got[0].Response != "500" || got[0].Next != "—" {
				t.Errorf("after its last attempt: %+v", got[0])
			}
			if n := len(recv.requests(m[1])); n != 8 {
				t.Errorf("the receiver got %d requests; want 8", n)
			}
			b.do(t, chromedp.Click(chromedp.CSS("details.answer summary")), chromedp.WaitVisible(chromedp.CSS("details.answer pre")))
			if got := b.text(t, "details.answer pre"); got != "the receiver is down <b>for maintenance</b>" {
				t.Errorf("the receiver's answer shows as %q", got)
			}
			if n := eval[int](t, b, `document.querySelectorAll('main b').length`); n != 0 {
				t.Errorf("the receiver's answer became markup: %d b elements", n)
			}
			b.page(t, "webhook-delivery-failed")
			// The receiver is back: redelivered, the same event, delivered.
			recv.fail(false)
			b.act(t, "webhook", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('main tbody tr')].filter((tr) => tr.cells[0].textContent.includes('`+m[1]+`')).map((tr) => tr.querySelector('button'))`)))
			if got := b.text(t, "[role=status]"); got != "Redelivering webhook.test "+m[1]+": it is pending again, with a new series of attempts." {
				t.Errorf("the redelivery's message: %q", got)
			}
			b.settle(t)
			b.act(t, "webhook", chromedp.Click(button("Refresh the deliveries")))
			if got := b.deliveries(t); got[0].Event != "webhook.test "+m[1] || got[0].Status != "delivered" || got[0].Attempt != "1" || got[0].Response != "200" {
				t.Errorf("after the redelivery: %+v", got[0])
			}
			// More than 24 hours later, only the new secret signs.
			if got := recv.requests(m[1]); len(got) != 9 || got[8].Status != 200 || !slices.Equal(got[8].SignedBy, []int{1}) {
				t.Errorf("the receiver's requests for the event: %+v", got)
			}
			if got := b.text(t, ".failing"); got != "" {
				t.Errorf("the delivered attempt did not end the failures: %q", got)
			}
			b.page(t, "webhook-redelivered")
		}},
		{"webhook changed and deleted", func(t *testing.T) {
			submit := chromedp.Click(chromedp.CSS("form.webhook-form button[type=submit]"))
			b.act(t, "webhook", chromedp.Click(chromedp.ID("ed-ev-allowlist-updated")), chromedp.Click(chromedp.ID("ed-ev-allowlist-expiring")),
				chromedp.SetValue(chromedp.ID("ed-description"), "The payments team's bot: new and expiring allowlists"), submit)
			if got := b.text(t, "[role=status]"); got != "Saved webhook #"+id+": events, description changed." {
				t.Errorf("the change's message: %q", got)
			}
			if _, body := call(t, "GET", b.api+"/webhooks/"+id, admin, ""); !strings.Contains(body, `"events":["allowlist.created","allowlist.expiring"],"description":"The payments team's bot: new and expiring allowlists"`) {
				t.Errorf("the webhook changed: %s", body)
			}
			// Nothing changed: nothing sent.
			b.do(t, submit, chromedp.WaitVisible(chromedp.CSS("form.webhook-form [role=alert]")))
			if got := b.text(t, "form.webhook-form [role=alert]"); got != "Nothing was changed." {
				t.Errorf("saving an unchanged form: %q", got)
			}
			// Deleting asks first.
			b.do(t, chromedp.Click(button("Delete…")), chromedp.WaitVisible(chromedp.ID("confirm-text")))
			if got := eval[string](t, b, `document.activeElement.id`); got != "confirm-text" {
				t.Errorf("the focus after asking to delete: %q", got)
			}
			if code, _ := call(t, "GET", b.api+"/webhooks/"+id, admin, ""); code != 200 {
				t.Errorf("asking to delete deleted: %d", code)
			}
			b.page(t, "webhook-delete-confirm")
			b.act(t, "webhooks", chromedp.Click(button("Delete webhook #"+id)))
			if got := b.text(t, "[role=status]") + " " + b.text(t, "main .empty"); got != "Deleted webhook #"+id+". No webhook." {
				t.Errorf("after deleting: %q", got)
			}
			if code, _ := call(t, "GET", b.api+"/webhooks/"+id, admin, ""); code != 404 {
				t.Errorf("the deleted webhook answers %d", code)
			}
			// Its audit trail, newest first, linking to its page, with no secret.
			b.open(t, "#/audit?target_type=webhook&target_id="+id, "audit")
			rows := eval[[]string](t, b, `[...document.querySelectorAll('main tbody tr')].map((tr) => tr.cells[1].textContent + ' ' + tr.cells[3].querySelector('a').getAttribute('href'))`)
			var want []string
			for _, a := range []string{"delete", "update", "redeliver", "test", "rotate", "test", "create"} {
				want = append(want, "webhook."+a+" #/webhooks/"+id)
			}
			if !slices.Equal(rows, want) {
				t.Errorf("the webhook's audit entries: %q; want %q", rows, want)
			}
			b.nowhere(t, "webhook's secret", secret)
			b.nowhere(t, "rotated secret", rotated)
			if got := eval[[]string](t, b, `[...document.querySelectorAll('#action option')].slice(1).map((o) => o.value)`); !slices.Equal(got, scangate.AuditActions) {
				t.Errorf("the audit log's actions: %q; the API's: %q", got, scangate.AuditActions)
			}
			if got := eval[[]string](t, b, `[...document.querySelectorAll('#target_type option')].slice(1).map((o) => o.value)`); !slices.Equal(got, scangate.AuditTargetTypes) {
				t.Errorf("the audit log's target types: %q; the API's: %q", got, scangate.AuditTargetTypes)
			}
			b.page(t, "audit-log-webhook")
		}},
		{"integration token set, never shown", func(t *testing.T) {
			const token = "glpat-dashboard-0123456789abcdef"
			b.act(t, "integrations", chromedp.Click(chromedp.CSS(`#nav a[href="#/integrations"]`)))
			if got := b.text(t, "h1"); got != "Integrations" {
				t.Errorf("the integrations page's h1: %q", got)
			}
			b.page(t, "integrations")
			b.act(t, "integrations", chromedp.SendKeys(chromedp.ID("in-vc"), "2"), chromedp.Click(chromedp.CSS("form.filters button")))
			if got := eval[string](t, b, `location.hash`) + " " + b.text(t, "h1") + " " + b.text(t, "main .empty"); got != "#/integrations/2 Integration 2 Not set up: no commit status is posted for the pull requests of integration 2." {
				t.Errorf("an integration not set up: %q", got)
			}
			if got := eval[string](t, b, `document.getElementById('in-token').type`); got != "password" {
				t.Errorf("the token's field is of type %q", got)
			}
			b.page(t, "integration-not-set-up")
			submit := chromedp.Click(chromedp.CSS("form.edit button[type=submit]"))
			// No token: the form asks for one, and sends nothing.
			b.do(t, submit, chromedp.WaitVisible(chromedp.ID("in-token-error")))
			if code, _ := call(t, "GET", b.api+"/integrations/2", admin, ""); code != 404 {
				t.Errorf("an integration was set without a token: %d", code)
			}
			// GitLab, its default API, a token.
			b.act(t, "integrations", chromedp.SetValue(chromedp.ID("in-type"), "gitlab"), chromedp.SendKeys(chromedp.ID("in-token"), token), submit)
			*secrets = append(*secrets, token)
			if got := b.text(t, "[role=status]"); got != "Saved integration 2: gitlab, https://gitlab.com/api/v4, a token set." {
				t.Errorf("the saving's message: %q", got)
			}
			if got := b.text(t, "[data-token-set=true]") + " / " + b.text(t, "label[for=in-token]"); got != "Set (never shown) / Replace the token (optional)" {
				t.Errorf("the token's state and field: %q", got)
			}
			b.nowhere(t, "integration's token", token)
			b.page(t, "integration-set")
			// A change without a token keeps it.
			b.act(t, "integrations", chromedp.SendKeys(chromedp.ID("in-api-url"), "https://gitlab.example.com/api/v4"), submit)
			_, body := call(t, "GET", b.api+"/integrations/2", admin, "")
			if !strings.Contains(body, `"type":"gitlab","api_url":"https://gitlab.example.com/api/v4","token_set":true`) || strings.Contains(body, token) {
				t.Errorf("the integration: %s", body)
			}
			if got := eval[string](t, b, `document.getElementById('in-api-url').value + ' ' + document.getElementById('in-token').value`); got != "https://gitlab.example.com/api/v4 " {
				t.Errorf("the form shows %q; want the API URL and no token", got)
			}
			b.nowhere(t, "integration's token", token)
			// Deleted, once confirmed: the API has it no more.
			b.do(t, chromedp.Click(button("Delete…")), chromedp.WaitVisible(chromedp.ID("confirm-text")))
			b.page(t, "integration-remove-confirm")
			b.act(t, "integrations", chromedp.Click(button("Delete integration 2")))
			if got := b.text(t, "[role=status]") + " " + b.text(t, "main .empty"); got != "Deleted integration 2. Not set up: no commit status is posted for the pull requests of integration 2." {
				t.Errorf("after removing: %q", got)
			}
			if code, _ := call(t, "GET", b.api+"/integrations/2", admin, ""); code != 404 {
				t.Errorf("the deleted integration answers %d", code)
			}
		}},
	}
}
