package api_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// TestUnfilteredAuditLogMergesLogins: GET /audit without a filter lists
// change and login entries together, newest first. Walked 3 entries a page
// over runs of changes and failed logins of different lengths (so pages
// end inside runs and at their edges), it returns every entry of both
// partitions exactly once, in order; each page is a Query of each partition
// that has more (two round trips at most), never a BatchGetItem; and the
// HTTP listing seals the cursor of both positions like any other.
func TestUnfilteredAuditLogMergesLogins(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	n := 0
	for _, run := range []struct {
		logins bool
		length int
	}{{false, 2}, {true, 3}, {false, 1}, {true, 1}, {false, 4}, {true, 5}, {false, 3}} {
		for range run.length {
			n++
			if run.logins {
				expectProblem(t, h.login(fmt.Sprintf("nobody%d", n), "wrong-password-1"), 401)
			} else {
				mustOK(t, h.call("create-user", jsonReq(&h.admin, createBody(fmt.Sprintf("user%d", n), "user"))))
			}
		}
	}
	// Every entry of both partitions, newest first, read apart from the code
	// under test.
	out, err := h.env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &h.env.Table})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, it := range out.Items {
		pk := it["PK"].(*types.AttributeValueMemberS).Value
		if pk == "AUDIT" || pk == "AUDITLOGIN" {
			want = append(want, it["SK"].(*types.AttributeValueMemberS).Value)
		}
	}
	slices.Sort(want)
	slices.Reverse(want)
	if len(want) != n+2 { // and the bootstrap, and the harness's token of the admin
		t.Fatalf("%d entries stored; want %d", len(want), n+2)
	}

	var ops []string
	st := h.env.Recorder(t, func(op string, _ any) { ops = append(ops, op) })
	var got []string
	var after map[string]string
	for page := 1; ; page++ {
		ops = nil
		p, err := st.AuditPage(context.Background(), scangate.AuditFilter{}, 3, after)
		entries, next := p.Items, p.Next
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 3 || len(ops) == 0 || len(ops) > 2 || slices.ContainsFunc(ops, func(op string) bool { return op != "Query" }) {
			t.Errorf("page %d: %d entries with %v; want at most 3 with a Query of each partition", page, len(entries), ops)
		}
		for _, e := range entries {
			got = append(got, e.ID)
		}
		if next == nil {
			break
		}
		after = next
	}
	if !slices.Equal(got, want) {
		t.Errorf("the walk read\n%v\nwant\n%v", got, want)
	}

	// Over HTTP: the same entries, through sealed cursors and Link headers.
	items := h.walk("list-audit", &h.admin, nil, "/api/audit", "", 3, true)
	var overHTTP []string
	for _, it := range items {
		overHTTP = append(overHTTP, it["id"].(string))
	}
	if !slices.Equal(overHTTP, want) {
		t.Errorf("GET /audit read\n%v\nwant\n%v", overHTTP, want)
	}
}
