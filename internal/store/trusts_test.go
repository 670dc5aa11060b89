package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestTrustsOfAnIssuer: the trusts of an issuer are read in one round
// trip, by name, with what was stored; another issuer's are not among
// them, and a deleted trust is gone at once.
func TestTrustsOfAnIssuer(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	who := scangate.Who{Actor: &scangate.Actor{UserID: 1, Username: "admin", TokenID: 1}}
	const gh, gl = "https://token.actions.githubusercontent.com", "https://gitlab.com"
	for _, tr := range []scangate.Trust{
		{Name: "b", Issuer: gh, Audience: "sg", Repos: []scangate.RepoRef{{VcID: 1, RepoID: 2}}, Conditions: map[string]string{"ref": "refs/heads/main"}},
		{Name: "a", Issuer: gh, Audience: "other", Repos: []scangate.RepoRef{{VcID: 1, RepoID: 3}, {VcID: 1, RepoID: 4}}},
		{Name: "c", Issuer: gl, Audience: "sg", Repos: []scangate.RepoRef{{VcID: 5, RepoID: 6}}},
		{Name: "d", Issuer: gh, Audience: "sg", Repos: []scangate.RepoRef{{VcID: 1, RepoID: 9}}},
	} {
		if _, err := env.Store.PutTrust(ctx, tr, who, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Store.DeleteTrust(ctx, "d", who, now); err != nil {
		t.Fatal(err)
	}
	var got []scangate.Trust
	trips := env.CountTrips(func() {
		var err error
		if got, err = env.Store.Trusts(ctx, gh); err != nil {
			t.Fatal(err)
		}
	})
	if trips != 1 {
		t.Errorf("%d round trips, want 1", trips)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("trusts of %s: %+v", gh, got)
	}
	if b := got[1]; b.Audience != "sg" || len(b.Repos) != 1 || b.Repos[0] != (scangate.RepoRef{VcID: 1, RepoID: 2}) ||
		b.Conditions["ref"] != "refs/heads/main" || b.UpdatedBy != 1 {
		t.Errorf("trust b read back as %+v", b)
	}
	if a := got[0]; len(a.Repos) != 2 || len(a.Conditions) != 0 {
		t.Errorf("trust a read back as %+v", a)
	}
	if none, err := env.Store.Trusts(ctx, "https://nobody.example.com"); err != nil || len(none) != 0 {
		t.Errorf("trusts of an unknown issuer: %+v, %v", none, err)
	}
}
