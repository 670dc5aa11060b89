package bucket_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/localstack"
)

func embedded(t *testing.T) *bucket.Bucket {
	t.Helper()
	srv, err := localstack.StartEmbeddedS3(awsclient.Placeholders())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	env := map[string]string{"UPLOADS_BUCKET": "objects", "S3_ENDPOINT": srv.URL}
	b, err := bucket.Open(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	name := "objects"
	if _, err := b.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestObjectWriter: an object written in pieces of odd sizes reads back
// whole through a presigned GET, with its type: a small one (one
// PutObject), one of exactly a part (a multipart upload of one), and one of two parts and a bit (a
// multipart upload).
func TestObjectWriter(t *testing.T) {
	b := embedded(t)
	ctx := context.Background()
	for _, size := range []int{0, 1000, bucket.PartSize, 2*bucket.PartSize + 12345} {
		want := make([]byte, size)
		_, _ = rand.Read(want)
		key := "sarif/x-" + time.Now().Format("150405.000000")
		w := b.Create(ctx, key, "application/sarif+json")
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 777777)
			if k, err := w.Write(rest[:n]); err != nil || k != n {
				t.Fatalf("write: %d %v", k, err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		url, expires, err := b.PresignGet(ctx, key, 15*time.Minute)
		if err != nil || time.Until(expires) < 14*time.Minute {
			t.Fatalf("presign: %v %v", expires, err)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, want) || resp.Header.Get("Content-Type") != "application/sarif+json" {
			t.Errorf("%d bytes: status %d, %d bytes read back, type %s", size, resp.StatusCode, len(got), resp.Header.Get("Content-Type"))
		}
	}
}
