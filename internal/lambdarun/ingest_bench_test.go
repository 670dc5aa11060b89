package lambdarun_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/lambdarun"
	"github.com/scangate/scangate/pkg/auth"
	"github.com/scangate/scangate/pkg/bucket"
	"github.com/scangate/scangate/pkg/local"
	"github.com/scangate/scangate/pkg/scangate"
	"github.com/scangate/scangate/pkg/store"
)

const benchBucket = "scangate-bench"

// startS3 starts the embedded S3 server with the bench bucket.
func startS3(b testing.TB) string {
	b.Helper()
	srv, err := local.StartEmbeddedS3()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	bk := openBucket(b, srv.URL)
	name := benchBucket
	if _, err := bk.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		b.Fatal(err)
	}
	return srv.URL
}

func openBucket(b testing.TB, endpoint string) *bucket.Bucket {
	b.Helper()
	env := map[string]string{"UPLOADS_BUCKET": benchBucket, "S3_ENDPOINT": endpoint, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}
	bk, err := bucket.Open(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	return bk
}

// s3Event is the ObjectCreated event of an upload's object.
func s3Event(bucketName string, id, size int64) []byte {
	ev, _ := json.Marshal(events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: "us-east-1", EventTime: time.Now().UTC(), EventName: "ObjectCreated:Put",
		S3: events.S3Entity{SchemaVersion: "1.0", Bucket: events.S3Bucket{Name: bucketName, Arn: "arn:aws:s3:::" + bucketName},
			Object: events.S3Object{Key: scangate.UploadKey(id), Size: size}},
	}}})
	return ev
}

// bigLog is the gzip of a log of one trivy run of n results, each a
// distinct advisory in a file of its own (n findings of one scan).
func bigLog(b *testing.B, n int) ([]byte, int) {
	var raw bytes.Buffer
	raw.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"trivy","version":"0.67.2"}},"results":[`)
	for i := range n {
		if i > 0 {
			raw.WriteByte(',')
		}
		fmt.Fprintf(&raw, `{"ruleId":"CVE-2099-%d","level":"error","message":{"text":"Package: libfoo\nInstalled Version: 1.%d.0\nVulnerability CVE-2099-%d"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"usr/lib/pkg%d/METADATA","uriBaseId":"ROOTPATH"},"region":{"startLine":1}}}]}`, 100000+i, i, 100000+i, i)
	}
	raw.WriteString(`]}]}`)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write(raw.Bytes())
	_ = w.Close()
	return z.Bytes(), raw.Len()
}

// BenchmarkIngest runs the ingest function's bootstrap (built for this
// machine) under the local Lambda Runtime API with the ObjectCreated event
// of an upload of 100,000 results (one trivy run, 100,000 findings of one
// VULNERABILITY scan) in the embedded S3 server, on DynamoDB Local when
// TEST_DYNAMODB_ENDPOINT is set (make bench) or the embedded DynamoDB-API
// server. It reports the invocation's time, findings recorded per second
// and the process's peak memory (VmHWM), and checks the upload complete
// with every finding counted.
func BenchmarkIngest(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	endpoint := os.Getenv("TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		emb, err := local.StartEmbedded()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = emb.Close() })
		endpoint = emb.URL
	}
	s3url := startS3(b)
	bk := openBucket(b, s3url)
	obj, rawLen := bigLog(b, n)
	bin := build(b, b.TempDir(), "./functions/ingest-sarif-upload", runtime.GOARCH)
	db, err := store.NewClient(ctx, endpoint)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		table := fmt.Sprintf("bench-ingest-%d-%d", time.Now().UnixNano(), i)
		if err := store.CreateTable(ctx, db, table); err != nil {
			b.Fatal(err)
		}
		st := store.New(db, table)
		creator, token := uploader(b, st)
		u, err := st.CreateUpload(ctx, scangate.Upload{CreatedBy: creator, TokenHash: auth.HashToken(token), CreatedAt: scangate.At(time.Now()), Envelope: scangate.NewScan{
			VcType: "github", VcID: 1, VcName: "acme", RepoID: 7, RepoName: "acme/image", WebhookID: 1, Status: "completed",
			PR: scangate.PRRef{Number: 1, Name: "Bump base image", Link: "https://git.example.com/acme/image/pull/1"},
		}}, scangate.UploadRetention)
		if err != nil {
			b.Fatal(err)
		}
		key := scangate.UploadKey(u.ID)
		name := benchBucket
		if _, err := bk.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: &name, Key: &key, Body: bytes.NewReader(obj)}); err != nil {
			b.Fatal(err)
		}
		res, err := lambdarun.RunProcess(ctx, lambdarun.Process{Argv: []string{bin}, Name: "ingest-sarif-upload", MemoryMB: 1024, Deadline: 15 * time.Minute, Env: []string{
			"TABLE_NAME=" + table, "DYNAMODB_ENDPOINT=" + endpoint, "UPLOADS_BUCKET=" + benchBucket, "S3_ENDPOINT=" + s3url,
			// DynamoDB Local keeps a table per access key and region: those
			// of the bench's own client (store.NewClient's).
			"AWS_REGION=" + orDefault("AWS_REGION", "us-east-1"), "AWS_ACCESS_KEY_ID=" + orDefault("AWS_ACCESS_KEY_ID", "local"),
			"AWS_SECRET_ACCESS_KEY=" + orDefault("AWS_SECRET_ACCESS_KEY", "local"), "LOG_LEVEL=ERROR",
		}}, [][]byte{s3Event(benchBucket, u.ID, int64(len(obj)))})
		if err != nil {
			b.Fatal(err)
		}
		done, err := st.Upload(ctx, u.ID)
		if err != nil || done.Status != scangate.UploadComplete || done.Recorded != n || len(done.ScanIDs) != 1 {
			b.Fatalf("%+v %v", done, err)
		}
		sc, _, err := st.Scan(ctx, done.ScanIDs[0])
		if err != nil || sc.VulnerabilityCount != n {
			b.Fatalf("the scan counts %d findings: %v", sc.VulnerabilityCount, err)
		}
		took := res.Invocations[0]
		b.ReportMetric(took.Seconds(), "s/upload")
		b.ReportMetric(n/took.Seconds(), "findings/s")
		b.ReportMetric(float64(res.PeakRSS)/1024, "peak-MiB")
		b.ReportMetric(float64(len(obj))/(1<<20), "gzip-MiB")
		b.ReportMetric(float64(rawLen)/(1<<20), "log-MiB")
	}
}

func orDefault(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// uploader stores a user who may record scans and a token of it, which an
// upload is created with: the ingest records an upload only while both
// may.
func uploader(b testing.TB, st *store.Store) (int64, string) {
	ctx := context.Background()
	who := scangate.Who{RequestID: "bench-ingest"}
	at := scangate.At(time.Now())
	u, err := st.CreateUser(ctx, scangate.User{Username: "uploader", Email: "uploader@example.com", EmailKey: "uploader@example.com",
		Role: scangate.RoleUser, Active: true, PasswordHash: "x", CreatedAt: at, UpdatedAt: at}, who)
	if err != nil {
		b.Fatal(err)
	}
	token, err := auth.NewToken(u.ID)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.PutToken(ctx, scangate.Token{Hash: auth.HashToken(token), UserID: u.ID, Kind: scangate.TokenLogin,
		CreatedAt: at.Time, ExpiresAt: at.Add(time.Hour)}, who); err != nil {
		b.Fatal(err)
	}
	return u.ID, token
}
