package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// allowNow creates an allowlist of rule and runs its re-evaluation in
// place, as a request does with a small group: the allowlist, and what it
// updated.
func allowNow(t testing.TB, st *store.Store, rule scangate.Rule) (scangate.Allowlist, scangate.Updated, error) {
	t.Helper()
	a, it, err := st.CreateAllowlist(context.Background(), scangate.Allowlist{Rule: rule}, "", scangate.Who{RequestID: "test"}, time.Now(), 0)
	if err != nil {
		return a, scangate.Updated{}, err
	}
	u, err := runNow(st, it)
	return a, u, err
}

// modifyNow modifies an allowlist and runs its re-evaluation in place.
func modifyNow(t testing.TB, st *store.Store, id int64, c scangate.AllowlistChange) (scangate.Updated, error) {
	t.Helper()
	_, it, err := st.UpdateAllowlist(context.Background(), id, c, scangate.Who{RequestID: "test"}, time.Now(), 0)
	if err != nil {
		return scangate.Updated{}, err
	}
	return runNow(st, it)
}

// runNow runs a piece of work in place to its end, and returns its
// counts.
func runNow(st *store.Store, it work.Item) (scangate.Updated, error) {
	it, err := st.Runner(time.Now, nil).Continue(context.Background(), it)
	return scangate.Updated{Secrets: it.Totals["secrets_updated"], Vulnerabilities: it.Totals["vulnerabilities_updated"]}, err
}

// runAt runs pieces of work in place to their end by a clock stopped at
// at (the time their judgements are made at).
func runAt(t testing.TB, st *store.Store, at time.Time, items ...work.Item) {
	t.Helper()
	for _, it := range items {
		if _, err := st.Runner(func() time.Time { return at }, nil).Continue(context.Background(), it); err != nil {
			t.Fatal(err)
		}
	}
}
