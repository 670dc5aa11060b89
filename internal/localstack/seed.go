package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// Seed records demo data through the same store code the functions use:
// 3 repositories on 2 integrations, 6 pull requests, 12 scans of both types
// in every status, with findings. It adds no user.
func Seed(ctx context.Context, st *store.Store, now time.Time) error {
	repos := []struct {
		vcID, repoID int64
		vcName, repo string
	}{
		{1, 101, "acme-github", "acme/payments"},
		{1, 102, "acme-github", "acme/web"},
		{2, 201, "acme-gitlab", "platform/infra"},
	}
	secrets := [][]string{{}, {"sha256:5f2b9c0e8d1a"}, {"sha256:9a8b7c6d5e4f", "sha256:0123456789ab"}}
	vulns := [][]string{{}, {"CVE-2021-44228"}, {"GHSA-jfh8-c2jp-5v3q", "CVE-2022-22965", "CVE-2023-44487"}}
	statuses := []string{"completed", "completed", "pending", "processing", "failed", "completed"}
	n := 0
	for i, r := range repos {
		for j := range 2 {
			number := int64(10*(i+1) + j)
			for k, t := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
				names := secrets[(i+j+k)%3]
				if t == scangate.ScanVulnerability {
					names = vulns[(i+2*j+k)%3]
				}
				ns := scangate.NewScan{
					Type: t, VcType: "github", VcID: r.vcID, VcName: r.vcName, RepoID: r.repoID, RepoName: r.repo,
					WebhookID: 1000 + r.vcID,
					PR: scangate.PRRef{Number: number, Name: fmt.Sprintf("Change %d of %s", number, r.repo),
						Link: fmt.Sprintf("https://git.example.com/%s/pull/%d", r.repo, number)},
					Status:       statuses[(2*i+j+k)%len(statuses)],
					OtherDetails: json.RawMessage(fmt.Sprintf(`{"scanner":"demo","duration_ms":%d}`, 800+100*n)),
				}
				if r.vcID == 2 {
					ns.VcType = "gitlab"
				}
				for f, name := range names {
					line := int64(10 + f)
					ns.Findings = append(ns.Findings, scangate.Finding{Name: name, Rule: "demo-rule", Path: "src/config.go", Line: &line})
				}
				if _, _, err := st.RecordScan(ctx, ns, scangate.Who{RequestID: "seed"}, now.Add(time.Duration(n-12)*time.Minute)); err != nil {
					return fmt.Errorf("seed scan %d: %w", n+1, err)
				}
				n++
			}
		}
	}
	return nil
}
