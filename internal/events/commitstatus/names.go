package commitstatus

import (
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
)

// Names caches repositories' full names by id, per API, for the providers
// that address a repository by name (GitHub): a deliverer keeps one for its
// execution environment, so a repository is looked up once per TTL rather
// than before every status. A nil *Names caches nothing. A name is
// forgotten when a post to it fails as a renamed or transferred repository
// would (see GitHub.Post), so the retry looks it up again. It also keeps
// the GitHub App installations' transports, with their installation
// tokens (see NewGitHubApp), at most max of them.
type Names struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[nameKey]nameEntry

	apps installations
}

type nameKey struct {
	api string
	id  int64
}

type nameEntry struct {
	owner, name string
	expires     time.Time
}

// NewNames returns a cache that keeps a name for ttl and at most max names.
func NewNames(ttl time.Duration, max int) *Names {
	return &Names{ttl: ttl, max: max, now: time.Now, m: map[nameKey]nameEntry{},
		apps: installations{m: map[installKey]*ghinstallation.Transport{}, max: max}}
}

func (n *Names) get(api string, id int64) (owner, name string, ok bool) {
	if n == nil {
		return "", "", false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.m[nameKey{api, id}]
	if !ok || !n.now().Before(e.expires) {
		return "", "", false
	}
	return e.owner, e.name, true
}

func (n *Names) put(api string, id int64, owner, name string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	if len(n.m) >= n.max {
		for k, e := range n.m {
			if !now.Before(e.expires) {
				delete(n.m, k)
			}
		}
		if len(n.m) >= n.max {
			clear(n.m) // full of live names: start again rather than grow
		}
	}
	n.m[nameKey{api, id}] = nameEntry{owner: owner, name: name, expires: now.Add(n.ttl)}
}

func (n *Names) forget(api string, id int64) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, nameKey{api, id})
}
