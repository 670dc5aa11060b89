package lambdarun_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/lambdarun"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

const benchBucket = "scangate-bench"

// startS3 starts the embedded S3 server with the bench bucket, admitting
// what the bench's functions sign: openBucket's client, a function with
// LambdaEnv's credentials (the cold-start fixture's) and with those of
// ingestOnce (the bench's own, over LambdaEnv's session token).
func startS3(b testing.TB) string {
	b.Helper()
	env := map[string]string{}
	for _, kv := range lambdarun.LambdaEnv("", "", 0) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	srv, err := localstack.StartEmbeddedS3("us-east-1", aws.Credentials{AccessKeyID: "bench", SecretAccessKey: "bench"},
		aws.Credentials{AccessKeyID: env["AWS_ACCESS_KEY_ID"], SecretAccessKey: env["AWS_SECRET_ACCESS_KEY"], SessionToken: env["AWS_SESSION_TOKEN"]},
		aws.Credentials{AccessKeyID: orDefault("AWS_ACCESS_KEY_ID", "local"), SecretAccessKey: orDefault("AWS_SECRET_ACCESS_KEY", "local"),
			SessionToken: env["AWS_SESSION_TOKEN"]})
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

// A logShape is how the results of a bench log name their advisories.
// Every log is runs of 25,000 results of trivy, each run its own
// category (automationDetails: one image of an upload of several).
type logShape struct {
	name string
	// advisory names the advisory of result i of run r.
	advisory func(r, i int) int
}

var shapes = []logShape{
	// Every result its own advisory: every finding its own allowlist
	// group (a RECENT item each, a group version read each): the worst
	// case for the recording.
	{"distinct", func(r, i int) int { return r*runResults + i }},
	// 2,500 advisories, each in 10 files of every image: the groups are
	// shared by the runs.
	{"shared", func(_, i int) int { return i % 2500 }},
}

const runResults = 25_000

// bigLog is the gzip of a log of n results in runs of 25,000, shaped by
// shape (n findings in n/25,000 scans), and the size of its JSON. Its
// results are compact (about 150 bytes) so that 500,000 of them fit the
// 100 MiB a log may hold.
func bigLog(n int, shape logShape) ([]byte, int) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	raw := 0
	write := func(format string, args ...any) {
		k, _ := fmt.Fprintf(w, format, args...)
		raw += k
	}
	write(`{"version":"2.1.0","runs":[`)
	for r := 0; r*runResults < n; r++ {
		if r > 0 {
			write(`,`)
		}
		write(`{"tool":{"driver":{"name":"trivy","version":"0.67.2"}},"automationDetails":{"id":"trivy/image-%d/1"},"results":[`, r)
		for i := range min(runResults, n-r*runResults) {
			if i > 0 {
				write(`,`)
			}
			a := 100000 + shape.advisory(r, i)
			write(`{"ruleId":"CVE-2099-%d","level":"error","message":{"text":"libfoo 1.%d.0"},`+
				`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"usr/lib/pkg%d/METADATA"},"region":{"startLine":1}}}]}`, a, i, i)
		}
		write(`]}`)
	}
	write(`]}`)
	_ = w.Close()
	return z.Bytes(), raw
}

// ingestSizes are the sizes BenchmarkIngest records; SCANGATE_BENCH_INGEST
// ("25000,100000") and SCANGATE_BENCH_SHAPES ("distinct") limit them.
func ingestSizes(b *testing.B) ([]int, []logShape) {
	sizes := []int{25_000, 100_000, 500_000}
	if v := os.Getenv("SCANGATE_BENCH_INGEST"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 || n%runResults != 0 {
				b.Fatalf("SCANGATE_BENCH_INGEST: %q is no multiple of %d", f, runResults)
			}
			sizes = append(sizes, n)
		}
	}
	var chosen []logShape
	for _, s := range shapes {
		if v := os.Getenv("SCANGATE_BENCH_SHAPES"); v == "" || slices.Contains(strings.Split(v, ","), s.name) {
			chosen = append(chosen, s)
		}
	}
	return sizes, chosen
}

// BenchmarkIngest runs the ingest function's bootstrap (built for this
// machine) under the local Lambda Runtime API, with its configured memory
// (1024 MB), on the ObjectCreated event of an upload in the embedded S3
// server: logs of 25,000, 100,000 and 500,000 results (runs of 25,000,
// each its own scan), of two shapes, on DynamoDB Local when
// TEST_DYNAMODB_ENDPOINT is set (make bench) or the embedded DynamoDB-API
// server. Before each, a probe measures the store's raw write rate: as
// many items of a finding's shape (its index keys included), written
// blindly into a fresh table with BatchWriteItem, 25 a call, 8 calls in
// flight as the recording sends them. It reports the invocation's time
// (event handed out to answer posted), findings recorded per second and
// as a fraction of the raw rate, and the process's peak memory (VmHWM),
// and checks the upload complete with every finding counted.
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	endpoint := os.Getenv("TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		emb, err := localstack.StartEmbedded()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = emb.Close() })
		endpoint = emb.URL
	}
	s3url := startS3(b)
	bk := openBucket(b, s3url)
	bin := build(b, b.TempDir(), "./functions/ingest-sarif-upload", runtime.GOARCH)
	db, err := awsclient.NewDynamoDB(ctx, endpoint)
	if err != nil {
		b.Fatal(err)
	}
	sizes, chosen := ingestSizes(b)
	for _, shape := range chosen {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/results=%d", shape.name, n), func(b *testing.B) {
				obj, rawLen := bigLog(n, shape)
				for b.Loop() {
					rate := rawWriteRate(b, db, n)
					took, peak, cpu := ingestOnce(b, db, bk, bin, endpoint, s3url, obj, n)
					b.ReportMetric(took.Seconds(), "s/upload")
					b.ReportMetric(float64(n)/took.Seconds(), "findings/s")
					b.ReportMetric(rate, "raw-items/s")
					b.ReportMetric(float64(n)/took.Seconds()/rate, "of-raw")
					b.ReportMetric(float64(peak)/1024, "peak-MiB")
					b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/finding")
					b.ReportMetric(float64(len(obj))/(1<<20), "gzip-MiB")
					b.ReportMetric(float64(rawLen)/(1<<20), "log-MiB")
				}
			})
		}
	}
}

// ingestOnce records one upload of obj (n results) through the ingest
// function's process on a fresh table and checks it: complete, n
// findings recorded and counted by its scans. It returns the
// invocation's time, the process's peak memory (KiB) and its CPU time.
func ingestOnce(b *testing.B, db *dynamodb.Client, bk *bucket.Bucket, bin, endpoint, s3url string, obj []byte, n int) (time.Duration, int64, time.Duration) {
	ctx := context.Background()
	table := fmt.Sprintf("bench-ingest-%d", time.Now().UnixNano())
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
		// of the bench's own client (awsclient.NewDynamoDB's).
		"AWS_REGION=" + orDefault("AWS_REGION", "us-east-1"), "AWS_ACCESS_KEY_ID=" + orDefault("AWS_ACCESS_KEY_ID", "local"),
		"AWS_SECRET_ACCESS_KEY=" + orDefault("AWS_SECRET_ACCESS_KEY", "local"), "LOG_LEVEL=ERROR",
	}}, [][]byte{s3Event(benchBucket, u.ID, int64(len(obj)))})
	if err != nil {
		b.Fatal(err)
	}
	done, err := st.Upload(ctx, u.ID)
	if err != nil || done.Status != scangate.UploadComplete || done.Recorded != n || len(done.ScanIDs) != (n+runResults-1)/runResults {
		b.Fatalf("%+v %v", done, err)
	}
	counted := int64(0)
	for _, id := range done.ScanIDs {
		sc, _, err := st.Scan(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		counted += sc.VulnerabilityCount
	}
	if counted != int64(n) {
		b.Fatalf("the scans count %d findings; want %d", counted, n)
	}
	return res.Invocations[0], res.PeakRSS, res.CPU
}

// rawWriteRate writes n items of a recorded finding's shape (as the
// ingest writes them for the bench's logs: its index keys included) into
// a fresh table, blindly, with BatchWriteItem: 25 items a call, 8 calls
// in flight (the store's batchParallel). It returns items per second.
func rawWriteRate(b *testing.B, db *dynamodb.Client, n int) float64 {
	ctx := context.Background()
	table := fmt.Sprintf("bench-raw-%d", time.Now().UnixNano())
	if err := store.CreateTable(ctx, db, table); err != nil {
		b.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	batches := make(chan []types.WriteRequest)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range 8 {
		wg.Go(func() {
			for batch := range batches {
				req := map[string][]types.WriteRequest{table: batch}
				for len(req) > 0 && failed.Load() == nil {
					out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
					if err != nil {
						failed.Store(&err)
						break
					}
					req = out.UnprocessedItems
				}
			}
		})
	}
	start := time.Now()
	var batch []types.WriteRequest
	for i := range n {
		name := fmt.Sprintf("CVE-2099-%d", 100000+i)
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"PK": s(fmt.Sprintf("SCAN#%d", 1+i/runResults)), "SK": s(fmt.Sprintf("FINDING#%06d", i%runResults)),
			"type": s("VULNERABILITY"), "name": s(name), "rule": s(name), "path": s(fmt.Sprintf("/usr/lib/pkg%d/METADATA", i%runResults)),
			"line": num(1), "repo_id": num(7), "vc_id": num(1), "sev": s("high"), "sup": &types.AttributeValueMemberBOOL{Value: false},
			"GSI1PK": s("FINDING#VULNERABILITY#" + name), "GSI1SK": s(fmt.Sprintf("%019d#%06d", 1+i/runResults, i%runResults)),
		}}})
		if len(batch) == 25 || i == n-1 {
			batches <- batch
			batch = nil
		}
	}
	close(batches)
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return float64(n) / time.Since(start).Seconds()
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
