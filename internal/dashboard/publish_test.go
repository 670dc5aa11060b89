package dashboard_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/dashboard"
	"github.com/scangate/scangate/internal/localstack"
)

const apiURL = "https://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod/api"

// TestSite: the deployed files are the embedded ones, config.json naming
// the API, and an index.html whose first element in head is a CSP
// narrowing connect-src to the API's origin.
func TestSite(t *testing.T) {
	files, err := dashboard.Site(apiURL, config.SignIn{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range files {
		keys = append(keys, f.Key)
		switch f.Key {
		case "index.html":
			want := "<head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"connect-src &#39;self&#39; https://abcdef1234.execute-api.eu-west-1.amazonaws.com\">\n<meta charset"
			if !strings.Contains(string(f.Body), want) {
				t.Errorf("index.html's head:\n%s", f.Body)
			}
		case dashboard.ConfigName:
			if string(f.Body) != `{"api_url":"`+apiURL+`","password_login":true}` || f.ContentType != "application/json" {
				t.Errorf("config.json: %s %s", f.ContentType, f.Body)
			}
		}
	}
	if want := append(dashboard.Names(), dashboard.ConfigName); !slices.Equal(keys, want) {
		t.Errorf("the site's files are %v; want %v", keys, want)
	}
	for _, bad := range []string{"", "/api", "http://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod/api", "https:///api", "https://u:p@x.example/api", "https://x.example/api?q"} {
		if _, err := dashboard.Site(bad, config.SignIn{}); err == nil {
			t.Errorf("Site(%q) was accepted", bad)
		}
	}
}

// TestPublish writes the site into a bucket of an S3-compatible server,
// removes what an older version left there, and empties the bucket.
func TestPublish(t *testing.T) {
	srv, err := localstack.StartEmbeddedS3("us-east-1", aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	env := map[string]string{"S3_ENDPOINT": srv.URL, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
	// The embedded server keeps no Cache-Control: what the requests carry
	// is recorded (S3 keeps and serves what a PUT carries).
	var mu sync.Mutex
	sent := map[string]string{}
	client, err := bucket.NewClient(func(k string) string { return env[k] }, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("record", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if r, ok := in.Request.(*smithyhttp.Request); ok && r.Method == "PUT" {
					mu.Lock()
					sent[strings.TrimPrefix(r.URL.Path, "/dashboard/")] = r.Header.Get("Cache-Control")
					mu.Unlock()
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "dashboard"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: aws.String("pages/old.js"), Body: strings.NewReader("old")}); err != nil {
		t.Fatal(err)
	}
	p := dashboard.Publisher{S3: client}
	n, err := p.Publish(ctx, name, apiURL, config.SignIn{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := dashboard.Site(apiURL, config.SignIn{})
	if n != len(files) {
		t.Errorf("published %d files of %d", n, len(files))
	}
	if keys := list(t, client, name); !slices.Equal(keys, sortedKeys(files)) {
		t.Errorf("the bucket holds %v", keys)
	}
	for _, f := range files {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: &name, Key: aws.String(f.Key)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(out.Body)
		_ = out.Body.Close()
		if !bytes.Equal(b, f.Body) || aws.ToString(out.ContentType) != f.ContentType || sent[f.Key] != dashboard.CacheControl {
			t.Errorf("%s: %s, Cache-Control %q, %d bytes", f.Key, aws.ToString(out.ContentType), sent[f.Key], len(b))
		}
	}
	if err := p.Empty(ctx, name); err != nil {
		t.Fatal(err)
	}
	if keys := list(t, client, name); len(keys) != 0 {
		t.Errorf("after Empty the bucket holds %v", keys)
	}
	if err := p.Empty(ctx, "no-such-bucket"); err != nil {
		t.Errorf("emptying a bucket that does not exist: %v", err)
	}
}

func list(t *testing.T, c *s3.Client, name string) []string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	slices.Sort(keys)
	return keys
}

func sortedKeys(files []dashboard.File) []string {
	var keys []string
	for _, f := range files {
		keys = append(keys, f.Key)
	}
	slices.Sort(keys)
	return keys
}

// TestSiteSignIn: config.json tells the dashboard single sign-on's
// provider (its authorization endpoint, the client id, the scope: the
// default when none is configured) and whether the password form is
// shown; nothing else (no issuer secret, no role mapping).
func TestSiteSignIn(t *testing.T) {
	for _, c := range []struct {
		signIn config.SignIn
		want   string
	}{
		{config.SignIn{PasswordLoginOff: true}, `{"api_url":"` + apiURL + `","password_login":false}`},
		{config.SignIn{AuthorizationEndpoint: "https://login.example.com/authorize", ClientID: "scangate"},
			`{"api_url":"` + apiURL + `","sso":{"authorization_endpoint":"https://login.example.com/authorize","client_id":"scangate","scope":"openid email profile"},"password_login":true}`},
		{config.SignIn{AuthorizationEndpoint: "https://login.example.com/authorize", ClientID: "scangate", Scope: "openid email groups", PasswordLoginOff: true},
			`{"api_url":"` + apiURL + `","sso":{"authorization_endpoint":"https://login.example.com/authorize","client_id":"scangate","scope":"openid email groups"},"password_login":false}`},
	} {
		files, err := dashboard.Site(apiURL, c.signIn)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Key == dashboard.ConfigName && string(f.Body) != c.want {
				t.Errorf("%+v: config.json %s, want %s", c.signIn, f.Body, c.want)
			}
		}
	}
}
