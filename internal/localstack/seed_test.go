package localstack_test

import (
	"context"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/localstack"
)

func TestSeed(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	if err := localstack.Seed(ctx, env.Store, time.Now()); err != nil {
		t.Fatal(err)
	}
	repos, prs, types, statuses := map[int64]bool{}, map[int64]bool{}, map[string]int{}, map[string]bool{}
	findings := int64(0)
	for id := int64(1); id <= 12; id++ {
		sc, pr, err := env.Store.Scan(ctx, id)
		if err != nil {
			t.Fatalf("scan %d: %v", id, err)
		}
		repos[sc.RepoID], prs[pr.ID] = true, true
		types[string(sc.Type)]++
		statuses[sc.Status] = true
		findings += sc.SecretCount + sc.VulnerabilityCount
	}
	if _, _, err := env.Store.Scan(ctx, 13); err == nil {
		t.Fatal("a 13th scan exists")
	}
	if len(repos) < 3 || len(prs) < 6 || types["SECRET"] == 0 || types["VULNERABILITY"] == 0 || len(statuses) < 3 || findings == 0 {
		t.Fatalf("demo data: %d repos, %d PRs, types %v, statuses %v, %d findings", len(repos), len(prs), types, statuses, findings)
	}
}
