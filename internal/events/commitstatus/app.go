package commitstatus

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v75/github"
	// ghinstallation's own go-github, for its token options.
	ghapp "github.com/google/go-github/v88/github"
)

// A GitHub App integration (github_app) authenticates as one installation
// of the App: ghinstallation signs a JWT with the App's private key
// (RS256, iss the App's id, valid two minutes), exchanges it at POST
// {api_url}/app/installations/{installation_id}/access_tokens for an
// installation token (valid an hour), and sends every request with that
// token, minting the next one a minute before it expires. A deliverer
// keeps the installations' transports for its execution environment (in
// its Names), so a token is minted about once an hour, not per post.

// NewGitHubApp returns a Poster for the API at in.APIURL authenticated as
// the installation in.InstallationID of the App in.AppID, whose private
// key is in.Token, sending (the token exchanges too) through hc's
// transport.
func NewGitHubApp(in Integration, hc *http.Client, names *Names) (Poster, error) {
	if in.AppID < 1 || in.InstallationID < 1 {
		return nil, fmt.Errorf("github_app: app_id %d and installation_id %d must be positive", in.AppID, in.InstallationID)
	}
	itr, err := names.installation(in, hc.Transport)
	if err != nil {
		return nil, err
	}
	app := &http.Client{Transport: itr, Timeout: hc.Timeout, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar}
	return newGitHub(in.APIURL, app, names, func(c *github.Client) *github.Client { return c })
}

// installKey names an installation's transport: the API, the App, the
// installation and the key (by its hash: a new key gets a new transport).
type installKey struct {
	api        string
	app, inst  int64
	keyHash    [sha256.Size]byte
	underlying http.RoundTripper
}

// installations caches installations' transports; at most max.
type installations struct {
	mu  sync.Mutex
	m   map[installKey]*ghinstallation.Transport
	max int
}

// installation returns the transport of in's installation, from the cache
// of n when it has one (a nil *Names keeps none: a token is minted per
// Poster).
func (n *Names) installation(in Integration, tr http.RoundTripper) (*ghinstallation.Transport, error) {
	if tr == nil {
		tr = http.DefaultTransport
	}
	api := strings.TrimSuffix(in.APIURL, "/")
	build := func() (*ghinstallation.Transport, error) {
		itr, err := ghinstallation.New(tr, in.AppID, in.InstallationID, []byte(in.Token))
		if err != nil {
			return nil, fmt.Errorf("github_app: private key: %w", err)
		}
		itr.BaseURL = api
		// The token asks for the permissions scangate uses and no more,
		// whatever the App was granted.
		itr.InstallationTokenOptions = &ghapp.InstallationTokenOptions{Permissions: &ghapp.InstallationPermissions{
			Checks: ghapp.Ptr("write"), Statuses: ghapp.Ptr("write"), Metadata: ghapp.Ptr("read")}}
		return itr, nil
	}
	if n == nil {
		return build()
	}
	k := installKey{api: api, app: in.AppID, inst: in.InstallationID, keyHash: sha256.Sum256([]byte(in.Token)), underlying: tr}
	n.apps.mu.Lock()
	defer n.apps.mu.Unlock()
	if itr, ok := n.apps.m[k]; ok {
		return itr, nil
	}
	itr, err := build()
	if err != nil {
		return nil, err
	}
	if len(n.apps.m) >= n.apps.max {
		clear(n.apps.m)
	}
	n.apps.m[k] = itr
	return itr, nil
}
