package commitstatus_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/events/commitstatus"
)

// appKey is a fresh RSA key for a test App, and its PEM (PKCS #1, as
// GitHub hands an App's key out).
func appKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// appHTTP is the deliverer's one client, shared by its posts.
var appHTTP = local.Client(10 * time.Second)

func githubApp(t *testing.T, apiURL, key string, appID, installation int64, names *commitstatus.Names) commitstatus.Poster {
	t.Helper()
	p, err := commitstatus.New(commitstatus.Integration{Type: "github_app", APIURL: apiURL, Token: key, AppID: appID, InstallationID: installation},
		local, appHTTP, names)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A GitHub App's installation posts statuses with an installation token
// it got by a JWT the App's key signed (the stand-in verifies its
// signature with the App's public key, its iss, iat and exp); the token is
// minted once and reused by the next posts of the execution environment,
// also by a Poster built anew for each delivery.
func TestGitHubAppMintsAnInstallationTokenOnce(t *testing.T) {
	srv := standIn(t, "ghp_unused")
	srv.AddRepo(7, "acme", "payments")
	k, key := appKey(t)
	srv.AddApp(4242, 99, &k.PublicKey, time.Hour)
	names := commitstatus.NewNames(time.Hour, 100)
	for i := range 3 {
		p := githubApp(t, srv.URL, key, 4242, 99, names)
		if err := p.Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, commitstatus.Status{State: commitstatus.Success, Description: "Not blocked"}); err != nil {
			t.Fatalf("post %d: %v (refused %+v)", i+1, err, srv.Refusals())
		}
	}
	ex := srv.Exchanges()
	if len(ex) != 1 || ex[0].Issuer != "4242" || ex[0].Installation != 99 {
		t.Fatalf("exchanges %+v, want one for installation 99 by App 4242", ex)
	}
	if got := srv.Statuses(); len(got) != 3 || got[2].Owner != "acme" || got[2].State != "success" {
		t.Fatalf("statuses %+v", got)
	}
	if r := srv.Refusals(); len(r) != 0 {
		t.Fatalf("refused %+v", r)
	}
}

// A token near its expiry is replaced: the next post mints a new one.
func TestGitHubAppRenewsATokenNearExpiry(t *testing.T) {
	srv := standIn(t, "ghp_unused")
	srv.AddRepo(7, "acme", "payments")
	k, key := appKey(t)
	srv.AddApp(4242, 99, &k.PublicKey, 30*time.Second) // within ghinstallation's minute of margin
	names := commitstatus.NewNames(time.Hour, 100)
	for range 2 {
		if err := githubApp(t, srv.URL, key, 4242, 99, names).Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha},
			commitstatus.Status{State: commitstatus.Success}); err != nil {
			t.Fatal(err)
		}
	}
	// Three requests (the repository's lookup, two statuses), each with a
	// token of its own.
	if ex := srv.Exchanges(); len(ex) != 3 || ex[0].Token == ex[1].Token || ex[1].Token == ex[2].Token {
		t.Fatalf("exchanges %+v, want three tokens", ex)
	}
}

// A JWT signed by another key, or for another installation, gets no
// token and posts nothing; the error does not show the key.
func TestGitHubAppRefusedWithAnotherKey(t *testing.T) {
	srv := standIn(t, "ghp_unused")
	srv.AddRepo(7, "acme", "payments")
	k, _ := appKey(t)
	_, other := appKey(t)
	srv.AddApp(4242, 99, &k.PublicKey, time.Hour)
	for _, c := range []struct {
		key          string
		app, install int64
		why          string
	}{{other, 4242, 99, "verification error"}, {other, 4243, 99, "verification error"}} {
		err := githubApp(t, srv.URL, c.key, c.app, c.install, nil).Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha},
			commitstatus.Status{State: commitstatus.Success})
		var e *commitstatus.Error
		if err == nil || !errors.As(err, &e) || !commitstatus.Retryable(err) || strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Fatalf("app %d: %v, want a retryable error", c.app, err)
		}
	}
	refused := srv.Refusals()
	if len(refused) != 2 || refused[0].Status != 401 || !strings.Contains(refused[0].Reason, "verification error") || len(srv.Statuses()) != 0 || len(srv.Exchanges()) != 0 {
		t.Fatalf("refused %+v, statuses %+v", refused, srv.Statuses())
	}
	// The right key, another installation: 404, no token.
	err := githubApp(t, srv.URL, keyPEM(k), 4242, 98, nil).Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, commitstatus.Status{State: commitstatus.Success})
	if err == nil || len(srv.Exchanges()) != 0 || srv.Refusals()[2].Status != 404 {
		t.Fatalf("installation 98: %v, refused %+v", err, srv.Refusals())
	}
}

func keyPEM(k *rsa.PrivateKey) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}
