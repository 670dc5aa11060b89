package localstack_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestCancelledTransactionsLeaveTheStoreWhole: one failed upload (an
// object that is not gzip), then 10 personal tokens created at once (their
// transactions on the user's token registry cancel each other), and the
// service still answers: the audit log, a scan's findings, a new
// allowlist, a new scan, the failed upload itself and the scheduled
// expiry. The embedded
// server rolls a cancelled transaction back by restoring a copy of its
// table, which could not restore an empty list: the failed upload's
// scan_ids came back untyped, and every Query failed from then on.
func TestCancelledTransactionsLeaveTheStoreWhole(t *testing.T) {
	t.Parallel()
	e := startUploads(t, nil)
	scan := `{"scan_type":"SECRET","vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,` +
		`"pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"},"status":"completed","findings":[{"name":"sha256:aa"}]}`
	if resp, body := do(t, "POST", e.api+"/pr/scan", e.admin, fmt.Sprintf(scan, 1)); resp.StatusCode != 201 {
		t.Fatalf("record: %d %s", resp.StatusCode, body)
	}
	c := e.create(t, 7)
	if code, body := put(t, c.UploadURL, c.UploadHeaders, []byte("not a gzip")); code != http.StatusOK {
		t.Fatalf("put: %d %s", code, body)
	}
	if u := e.await(t, c.ID); u.Status != "failed" || len(u.ScanIDs) != 0 {
		t.Fatalf("upload: %+v; want failed", u)
	}
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Go(func() {
			resp, _ := do(t, "POST", e.api+"/auth/tokens", e.admin, fmt.Sprintf(`{"name":"t%d"}`, i))
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, code := range codes {
		if code != 201 {
			t.Errorf("token %d: %d", i, code)
		}
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/audit", ""},
		{"GET", "/pr/scan/1/findings", ""},
		{"GET", "/pr/1/scans", ""},
		{"GET", "/auth/tokens", ""},
		{"POST", "/whitelist", `{"type":"SECRET","name":"sha256:aa","global_":true,"reason":"used_in_tests"}`},
		{"POST", "/pr/scan", fmt.Sprintf(scan, 2)},
		{"GET", fmt.Sprintf("/pr/scan/sarif/uploads/%d", c.ID), ""},
	} {
		if resp, body := do(t, r.method, e.api+r.path, e.admin, r.body); resp.StatusCode/100 != 2 {
			t.Errorf("%s %s: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	// The scheduled expiry, which runs every minute, runs.
	if out, err := e.stack.Invoke(context.Background(), "ExpireAllowlistsFunction", []byte(`{"source":"aws.events","detail-type":"Scheduled Event"}`)); err != nil {
		t.Errorf("the scheduled expiry: %v %s", err, out)
	}
	if u := e.status(t, c.ID); u.Status != "failed" || u.ScanIDs == nil || len(u.ScanIDs) != 0 || len(u.Errors) == 0 {
		t.Errorf("the failed upload reads %+v", u)
	}
}
