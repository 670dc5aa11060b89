package dashboard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/oidcprovider"
)

// TestBrowserSSO: the dashboard's sign-in through a real OpenID provider
// (node oidc-provider, its development sign-in form) in headless
// Chromium, with password login switched off: the sign-in page offers
// single sign-on alone; a mapped admin (alice, sec-team) and a mapped
// readonly person (rita, auditors) come back signed in with their role; a
// person in no mapped group (mallory) comes back to the sign-in page with
// the refusal; an answer whose state is not the one the dashboard sent is
// refused without asking the API. Screenshots in .build/screenshots/sso.
func TestBrowserSSO(t *testing.T) {
	const clientID, secret = "scangate-dashboard", "dashboard-client-secret-0123456789"
	var provider *oidcprovider.Provider
	b := startBrowserWith(t, browserOptions{shots: "sso", signIn: func(dashboard string) (config.SSO, config.SignIn) {
		provider = oidcprovider.Start(t, oidcprovider.Options{Clients: []oidcprovider.Client{{
			ID: clientID, Secret: secret, RedirectURIs: []string{dashboard + "/"},
			GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
		}}})
		p, err := oidc.NewProvider(context.Background(), provider.Issuer)
		if err != nil {
			t.Fatal(err)
		}
		return config.SSO{Issuer: provider.Issuer, ClientID: clientID, ClientSecret: secret,
				Roles: `{"admins":["sec-team"],"users":["developers"],"readonly":["auditors"]}`},
			config.SignIn{AuthorizationEndpoint: p.Endpoint().AuthURL, ClientID: clientID, Scope: "openid email profile groups", PasswordLoginOff: true}
	}})

	// signIn starts single sign-on from the dashboard's sign-in page and
	// signs login in at the provider's form; the dashboard then shows
	// page.
	signIn := func(t *testing.T, login, page string) {
		t.Helper()
		// A fresh browser session: no dashboard session, no provider
		// session (which would sign the last person in again).
		if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		b.do(t, chromedp.Navigate(b.url+"/"),
			void(chromedp.Evaluate[bool](`sessionStorage.clear(), true`)), chromedp.Navigate(b.url+"/#/signin"))
		b.shown(t, 0, "signin")
		b.do(t, chromedp.Click(chromedp.CSS("button.sso")), chromedp.WaitVisible(chromedp.CSS("input[name=login]")))
		if !strings.HasPrefix(eval[string](t, b, `location.href`), provider.Issuer+"/interaction/") {
			t.Fatalf("single sign-on went to %s", eval[string](t, b, `location.href`))
		}
		b.do(t, chromedp.SendKeys(chromedp.CSS("input[name=login]"), login),
			chromedp.SendKeys(chromedp.CSS("input[name=password]"), "any-password"),
			chromedp.Click(chromedp.CSS("button[type=submit]")))
		b.arrived(t, page)
	}
	role := func(t *testing.T) string {
		return eval[string](t, b, `JSON.parse(sessionStorage.getItem('scangate.user') || '{}').role || ''`)
	}

	t.Run("the sign-in page", func(t *testing.T) {
		b.do(t, chromedp.Navigate(b.url+"/"))
		b.shown(t, 0, "signin")
		if got := b.text(t, "button.sso"); got != "Sign in with single sign-on" {
			t.Errorf("the single sign-on button says %q", got)
		}
		if n := eval[int](t, b, `document.querySelectorAll('#username, #password').length`); n != 0 {
			t.Errorf("password login is off, yet the page has %d of its fields", n)
		}
		b.page(t, "signin-sso")
	})
	t.Run("a mapped admin", func(t *testing.T) {
		signIn(t, "alice", "prs")
		if got := role(t); got != "admin" {
			t.Errorf("alice signed in as %q; want admin", got)
		}
		if q := eval[string](t, b, `location.search`); q != "" {
			t.Errorf("the code stays in the URL: %s", q)
		}
		if eval[string](t, b, `sessionStorage.getItem('scangate.sso') || ''`) != "" {
			t.Error("the PKCE verifier stays in sessionStorage after the sign-in")
		}
		b.page(t, "prs-after-sso")
	})
	t.Run("a mapped readonly person", func(t *testing.T) {
		signIn(t, "rita", "prs")
		if got := role(t); got != "readonly" {
			t.Errorf("rita signed in as %q; want readonly", got)
		}
	})
	t.Run("a person in no mapped group", func(t *testing.T) {
		signIn(t, "mallory", "signin")
		cond := `document.querySelector('[role=alert]')?.textContent || ''`
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`(`+cond+`) !== ''`, chromedp.WithPollingTimeout(0))); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, b, cond); !strings.Contains(got, "none of the groups") {
			t.Errorf("mallory is told %q", got)
		}
		if eval[string](t, b, `sessionStorage.getItem('scangate.token') || ''`) != "" {
			t.Error("mallory has a session token")
		}
		b.page(t, "signin-refused")
	})
	t.Run("a state that is not ours", func(t *testing.T) {
		b.do(t, chromedp.Navigate(b.url+"/#/signin"))
		b.shown(t, 0, "signin")
		before := len(b.requested())
		b.do(t, void(chromedp.Evaluate[bool](`sessionStorage.setItem('scangate.sso', JSON.stringify({state: 'ours', nonce: 'n', verifier: 'v', redirect: location.origin + '/'})), true`)),
			chromedp.Navigate(b.url+"/?code=stolen-code&state=theirs"))
		b.shown(t, 0, "signin")
		cond := `document.querySelector('[role=alert]')?.textContent || ''`
		if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`(`+cond+`) !== ''`, chromedp.WithPollingTimeout(0))); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, b, cond); !strings.Contains(got, "does not belong to a sign-in started here") {
			t.Errorf("a foreign state: %q", got)
		}
		for _, r := range b.requested()[before:] {
			if strings.Contains(r, "/auth/oidc/session") {
				t.Errorf("the dashboard sent a code of a foreign state to the API: %s", r)
			}
		}
	})
}

// arrived waits until the dashboard shows page after navigations (from
// the provider back to the dashboard), which end the waits of the
// documents they leave.
func (b *browser) arrived(t *testing.T, page string) {
	t.Helper()
	cond := `location.origin === ` + strconv.Quote(b.url) + ` && document.getElementById('main')?.getAttribute('aria-busy') === 'false' && Number(document.getElementById('main').dataset.view || 0) > 0 && document.getElementById('main').dataset.page === ` + strconv.Quote(page)
	for tries := 0; ; tries++ {
		_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(0)))
		if err == nil {
			return
		}
		if tries == 20 || !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context") {
			t.Fatalf("waiting for the %s page (at %s): %v", page, eval[string](t, b, `location.href`), err)
		}
	}
}
