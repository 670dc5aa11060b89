package localstack_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/localstack"
)

// TestEmbeddedS3HeaderSignatures: the embedded S3 server admits the S3
// client signing (in the Authorization header) with its credentials, and
// refuses, 403 with S3's error code, a client of another secret or another
// key, a request signed an hour ago, a body other than the one its
// x-amz-content-sha256 names, and an unsigned GET of an object; the refused
// PUTs store nothing.
func TestEmbeddedS3HeaderSignatures(t *testing.T) {
	region, creds := awsclient.Placeholders()
	srv, err := localstack.StartEmbeddedS3(region, creds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	open := func(id, secret string) *bucket.Bucket {
		env := map[string]string{"UPLOADS_BUCKET": "signed", "S3_ENDPOINT": srv.URL, "AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret}
		b, err := bucket.Open(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	own := open(creds.AccessKeyID, creds.SecretAccessKey)
	name := own.Name()
	if _, err := own.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	putKey := func(b *bucket.Bucket, key string) error {
		_, err := b.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: aws.String(key), Body: strings.NewReader("object")})
		return err
	}
	if err := putKey(own, "own"); err != nil {
		t.Fatalf("PutObject signed by the server's credentials: %v", err)
	}
	for _, c := range []struct{ id, secret, code string }{
		{creds.AccessKeyID, "another-secret", "SignatureDoesNotMatch"},
		{"AKIDANOTHERKEY", creds.SecretAccessKey, "InvalidAccessKeyId"},
	} {
		err := putKey(open(c.id, c.secret), "forged")
		if api := (smithy.APIError)(nil); !errors.As(err, &api) || api.ErrorCode() != c.code {
			t.Errorf("PutObject by %s with secret %s: %v; want %s", c.id, c.secret, err, c.code)
		}
	}

	// A PUT signed by the right credentials an hour ago, then one whose
	// body is not the one signed.
	send := func(at time.Time, signedBody, sentBody string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, srv.URL+"/"+name+"/forged", strings.NewReader(signedBody))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(signedBody))
		req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
		if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "s3", region, at,
			func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }); err != nil {
			t.Fatal(err)
		}
		headers := map[string]string{}
		for k := range req.Header {
			headers[k] = req.Header.Get(k)
		}
		return put(t, req.URL.String(), headers, []byte(sentBody))
	}
	if code, body := send(time.Now().Add(-time.Hour), "object", "object"); code != http.StatusForbidden || !strings.Contains(body, "RequestTimeTooSkewed") {
		t.Errorf("a PUT signed an hour ago: %d %s; want 403 RequestTimeTooSkewed", code, body)
	}
	if code, body := send(time.Now(), "object", "forged"); code != http.StatusForbidden || !strings.Contains(body, "XAmzContentSHA256Mismatch") {
		t.Errorf("a PUT of another body: %d %s; want 403 XAmzContentSHA256Mismatch", code, body)
	}
	out, err := own.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "own" {
		t.Errorf("the bucket holds %d objects after refused PUTs; want only own", len(out.Contents))
	}
	resp, err := http.Get(srv.URL + "/" + name + "/own")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	refused(t, "an unsigned GET of an object", resp.StatusCode, string(b), "AccessDenied")
	if code, body := send(time.Now(), "object", "object"); code != http.StatusOK {
		t.Errorf("the same PUT signed now: %d %s", code, body)
	}
}
