package localstack_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCommitStatusesThroughGitHubApp: PUT /integrations with a GitHub
// App's installation (its key checked, sealed, never shown); gate
// changes post statuses with an installation token minted once by a JWT
// the App's key signed, which the stand-in verifies; a bad key or a
// missing id is refused (422) and changes nothing.
func TestCommitStatusesThroughGitHubApp(t *testing.T) {
	t.Parallel()
	gh := gitHub(t, "ghp_unused")
	gh.AddRepo(5, "acme", "api")
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	gh.AddApp(31, 4001, &k.PublicKey, time.Hour)
	e := startEvents(t)
	put := func(status int, body map[string]any) string {
		b, _ := json.Marshal(body)
		return e.call(t, status, "PUT", "/integrations/1", string(b))
	}
	app := map[string]any{"type": "github_app", "api_url": gh.URL, "app_id": 31, "installation_id": 4001, "private_key": key}
	got := put(200, app)
	var view map[string]any
	if err := json.Unmarshal([]byte(got), &view); err != nil || view["type"] != "github_app" || view["app_id"] != 31.0 ||
		view["installation_id"] != 4001.0 || view["token_set"] != true {
		t.Fatalf("PUT answered %s", got)
	}
	for _, bad := range []map[string]any{
		{"type": "github_app", "api_url": gh.URL, "app_id": 31, "installation_id": 4001, "private_key": "not a key"},
		{"type": "github_app", "api_url": gh.URL, "installation_id": 4001, "private_key": key},
		{"type": "github_app", "api_url": gh.URL, "app_id": 0, "installation_id": 4001},
		{"type": "github_app", "api_url": gh.URL, "app_id": 31, "installation_id": 4001, "token": "ghp_x"},
		{"type": "github", "api_url": gh.URL},                     // a key is no token
		{"type": "github", "api_url": gh.URL, "private_key": key}, // a token's integration has no key
	} {
		if p := put(422, bad); strings.Contains(p, "PRIVATE KEY") || strings.Contains(p, "MII") {
			t.Errorf("the problem quotes the key: %s", p)
		}
	}
	got = e.call(t, 200, "GET", "/integrations/1", "")
	if strings.Contains(got, "PRIVATE") || strings.Contains(got, "MII") || !strings.Contains(got, `"app_id":31`) {
		t.Fatalf("GET shows %s", got)
	}
	// A PUT without the key keeps it (a new installation id).
	delete(app, "private_key")
	app["installation_id"] = 4001
	put(200, app)

	sha := strings.Repeat("d", 40)
	for seq, blocked := range []bool{true, false, true} {
		gateChanged(t, e, int64(seq+1), blocked, sha)
		drain(t, e.stack, e.clock)
	}
	if got := states(gh, sha); !slices.Equal(got, []string{"failure", "success", "failure"}) {
		t.Fatalf("statuses %v (refused %+v)", got, gh.Refusals())
	}
	// One check run on the head commit, created by the first gate and
	// updated by the next two; it shows the newest gate.
	runs := gh.CheckRuns()
	if len(runs) != 1 || runs[0].SHA != sha || runs[0].Name != "scangate" || runs[0].Conclusion != "failure" || runs[0].Title != "Blocked: 2 secrets" {
		t.Fatalf("check runs %+v", runs)
	}
	if got := strings.Join(gh.CheckRunRequests(), ","); got != "create,update 1,update 1" {
		t.Errorf("check-run requests %s", got)
	}
	// The third gate's change again (a copy of its event, as an
	// interrupted re-evaluation can leave): the run already shows it and
	// is not sent again.
	gateChanged(t, e, 3, true, sha)
	drain(t, e.stack, e.clock)
	if got := strings.Join(gh.CheckRunRequests(), ","); got != "create,update 1,update 1" {
		t.Errorf("check-run requests after the copy %s", got)
	}
	if ex := gh.Exchanges(); len(ex) != 1 || ex[0].Issuer != "31" || ex[0].Installation != 4001 {
		t.Errorf("token exchanges %+v, want one", ex)
	}
	if r := gh.Refusals(); len(r) != 0 {
		t.Errorf("refused %+v", r)
	}
}
