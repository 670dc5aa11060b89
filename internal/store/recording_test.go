package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// upload is what the tests below record: two scans of one PR (SECRET
// gitleaks, VULNERABILITY trivy), their findings in four parts of 60, as
// the runs of a log come.
type upload struct {
	scans []scangate.NewScan
	parts []part
}

type part struct {
	scan int
	fs   []scangate.Finding
}

func newUpload(pr int64) upload {
	env := scangate.NewScan{VcType: "github", VcID: 1, VcName: "v", RepoID: 3, RepoName: "o/r", WebhookID: 1,
		PR: scangate.PRRef{Number: pr, Name: "n", Link: "l"}, Status: "completed"}
	sec, vul := env, env
	sec.Type, sec.Category = scangate.ScanSecret, "gitleaks"
	vul.Type, vul.Category = scangate.ScanVulnerability, "trivy"
	u := upload{scans: []scangate.NewScan{sec, vul}}
	for p := range 4 {
		var fs []scangate.Finding
		for i := range 60 {
			name := fmt.Sprintf("CVE-%d-%d", p, i)
			if p%2 == 0 {
				name = fmt.Sprintf("sha256:%02x%02x", p, i)
			}
			line := int64(i + 1)
			fs = append(fs, scangate.Finding{Name: name, Path: "f.go", Line: &line, Severity: scangate.SeverityHigh})
		}
		u.parts = append(u.parts, part{scan: p % 2, fs: fs})
	}
	return u
}

func (u upload) fill(add func(int, []scangate.Finding) error) error {
	for _, p := range u.parts {
		if err := add(p.scan, p.fs); err != nil {
			return err
		}
	}
	return nil
}

func (u upload) record(st *store.Store, once string) ([]scangate.Scan, bool, error) {
	scans, _, recorded, err := st.RecordScansFrom(context.Background(), u.scans, testWho, time.Now(), once, u.fill)
	return scans, recorded, err
}

// failPuts fails every BatchWriteItem that puts items after the first
// after of them (DynamoDB unavailable beyond the SDK's retries); deletes
// too when deletes is set.
func failPuts(env *ddbtest.Env, after int64, deletes bool) {
	var puts atomic.Int64
	f := func(op string, in any) error {
		bw, ok := in.(*dynamodb.BatchWriteItemInput)
		if !ok {
			return nil
		}
		for _, reqs := range bw.RequestItems {
			if len(reqs) > 0 && (reqs[0].PutRequest != nil && puts.Add(1) > after || reqs[0].DeleteRequest != nil && deletes) {
				return ddbtest.InternalServerError()
			}
		}
		return nil
	}
	env.Fault.Store(&f)
}

// checkClean runs check and wants no drift, scans scans and findings
// findings, and unrecorded findings of scans never committed.
func checkClean(t *testing.T, env *ddbtest.Env, scans, findings, unrecorded int) {
	t.Helper()
	rep, err := env.Store.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Drift) > 0 || rep.Scans != scans || rep.Findings != findings || rep.Unrecorded != unrecorded {
		t.Errorf("check: %d scans, %d findings, %d unrecorded, drift %v; want %d, %d, %d and none",
			rep.Scans, rep.Findings, rep.Unrecorded, rep.Drift, scans, findings, unrecorded)
	}
}

// TestRecordingFailsMidway: a recording whose writes fail after some of
// its findings were written (DynamoDB unavailable beyond the SDK's
// retries) fails and leaves nothing: no scan, no PR, no finding (it
// deleted those it wrote), and check finds no drift. A retry under the
// same once key records every scan once, exactly counted; another answers
// with those scans and records nothing.
func TestRecordingFailsMidway(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	u := newUpload(1)
	failPuts(env, 5, false)
	if _, _, err := u.record(env.Store, "upload#1"); err == nil || scangate.KindOf(err) != scangate.KindUnavailable {
		t.Fatalf("a recording whose writes fail: %v; want unavailable", err)
	}
	env.Fault.Store(nil)
	checkClean(t, env, 0, 0, 0)
	if rep, err := env.Store.Check(context.Background()); err != nil || rep.PRs != 0 {
		t.Errorf("PRs after a failed recording: %+v %v", rep, err)
	}

	scans, recorded, err := u.record(env.Store, "upload#1")
	if err != nil || !recorded || len(scans) != 2 || scans[0].SecretCount != 120 || scans[1].VulnerabilityCount != 120 {
		t.Fatalf("the retry: %v %+v %v", recorded, scans, err)
	}
	checkClean(t, env, 2, 240, 0)
	again, recorded, err := u.record(env.Store, "upload#1")
	if err != nil || recorded || again[0].ID != scans[0].ID || again[1].ID != scans[1].ID {
		t.Errorf("a redelivery: %v %+v %v", recorded, again, err)
	}
	checkClean(t, env, 2, 240, 0)
}

// TestRecordingThatDied: a recording that could not delete what it wrote
// (as one whose process died) leaves findings that no scan counts: check
// counts them apart and finds no drift, even after an allowlist change
// met them through the index (it judges no scan of theirs). DropUnrecorded
// under its once key deletes them (a change after it meets none), and the
// next delivery records once.
func TestRecordingThatDied(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	u := newUpload(2)
	failPuts(env, 5, true)
	_, _, err := u.record(env.Store, "upload#2")
	if err == nil || !strings.Contains(err.Error(), "left unrecorded") {
		t.Fatalf("a recording that cannot delete what it wrote: %v", err)
	}
	env.Fault.Store(nil)
	rep, err := env.Store.Check(ctx)
	if err != nil || rep.Unrecorded == 0 || rep.Scans != 0 || len(rep.Drift) > 0 {
		t.Fatalf("check after it: %+v %v", rep, err)
	}
	left := rep.Unrecorded
	rule := scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:0000", Active: true, Global: true}
	if _, _, err := allowNow(t, env.Store, rule); err != nil {
		t.Fatal(err)
	}
	checkClean(t, env, 0, 0, left)

	if err := env.Store.DropUnrecorded(ctx, "upload#2"); err != nil {
		t.Fatal(err)
	}
	checkClean(t, env, 0, 0, 0)
	rule.Name = "sha256:0001"
	if _, upd, err := allowNow(t, env.Store, rule); err != nil || upd.Secrets != 0 {
		t.Fatalf("an allowlist of a finding dropped: %+v %v", upd, err)
	}
	scans, recorded, err := u.record(env.Store, "upload#2")
	if err != nil || !recorded || scans[0].SecretCount != 118 || scans[1].VulnerabilityCount != 120 {
		t.Fatalf("the next delivery: %v %+v %v", recorded, scans, err)
	}
	checkClean(t, env, 2, 240, 0)
	// Dropping again deletes nothing of committed scans.
	if err := env.Store.DropUnrecorded(ctx, "upload#2"); err != nil {
		t.Fatal(err)
	}
	checkClean(t, env, 2, 240, 0)
}

// TestRecordingMeetsAChange: an allowlist created while a recording is
// between two parts (its first part written and judged, its scans not
// committed) passes the recording by; the recording, checking its groups
// after its commit, settles the findings the change covers: exact counts
// and no drift.
func TestRecordingMeetsAChange(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	u := newUpload(3)
	fill := func(add func(int, []scangate.Finding) error) error {
		for k, p := range u.parts {
			if err := add(p.scan, p.fs); err != nil {
				return err
			}
			if k == 0 {
				rule := scangate.Rule{Type: scangate.ScanSecret, Name: "sha256:0001", Active: true, Global: true}
				if _, _, err := allowNow(t, env.Store, rule); err != nil {
					return err
				}
			}
		}
		return nil
	}
	scans, _, _, err := env.Store.RecordScansFrom(ctx, u.scans, testWho, time.Now(), "", fill)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := env.Store.Scan(ctx, scans[0].ID)
	if err != nil || got.SecretCount != 119 {
		t.Errorf("the secrets counted: %d (%v); want 119", got.SecretCount, err)
	}
	checkClean(t, env, 2, 240, 0)
}
