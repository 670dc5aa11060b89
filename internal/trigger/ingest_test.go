package trigger_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/trigger"
)

// fakeObject is a bucket of one object whose size the bucket may misreport.
type fakeObject struct {
	body     []byte
	size     int64 // what Open reports
	read     int   // bytes the ingest read
	deleted  bool
	presigns int
}

func (f *fakeObject) PresignPut(context.Context, string, time.Duration) (string, map[string]string, time.Time, error) {
	f.presigns++
	return "", nil, time.Time{}, nil
}

func (f *fakeObject) Open(context.Context, string) (io.ReadCloser, int64, error) {
	return io.NopCloser(&counting{r: bytes.NewReader(f.body), n: &f.read}), f.size, nil
}

func (f *fakeObject) Delete(context.Context, string) error { f.deleted = true; return nil }

type counting struct {
	r io.Reader
	n *int
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += n
	return n, err
}

// TestIngestObjectSize: the ingest function enforces the object's limit
// whatever the event and the bucket say: an object whose event says it is
// small but whose GetObject says it is over the limit is refused before a
// byte is read; one whose size is misreported as small is refused once the
// reading passes the limit. Neither records anything.
func TestIngestObjectSize(t *testing.T) {
	env := ddbtest.New(t)
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(testWriter{t}, nil))
	var log2 strings.Builder
	log2.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[`)
	for i := range 100 {
		var v [16]byte
		_, _ = rand.Read(v[:])
		if i > 0 {
			log2.WriteByte(',')
		}
		log2.WriteString(`{"ruleId":"r","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},` +
			`"region":{"startLine":1,"snippet":{"text":"` + hex.EncodeToString(v[:]) + `"}}}}]}`)
	}
	log2.WriteString(`]}]}`)
	body := gzipBytes(t, []byte(log2.String()))
	for _, c := range []struct {
		name     string
		reported int64
		readMax  int
	}{
		{"size over the limit", 1 << 20, 0},
		{"size misreported as small", 10, 1025},
	} {
		u, err := env.Store.CreateUpload(ctx, scangate.Upload{CreatedBy: 1, CreatedAt: scangate.At(time.Now()), Envelope: scangate.NewScan{
			VcType: "github", VcID: 1, VcName: "v", RepoID: 1, RepoName: "o/r", WebhookID: 1, Status: "completed",
			PR: scangate.PRRef{Number: 1, Name: "n", Link: "l"}}}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		obj := &fakeObject{body: body, size: c.reported}
		g := trigger.Ingest{Store: env.Store, Bucket: obj, Log: log, Now: time.Now, MaxBytes: 1024, Limits: trigger.UploadLimits()}
		ev := events.S3Event{Records: []events.S3EventRecord{{EventName: "ObjectCreated:Put",
			S3: events.S3Entity{Object: events.S3Object{Key: scangate.UploadKey(u.ID), URLDecodedKey: scangate.UploadKey(u.ID), Size: 10}}}}}
		if err := g.Handle(ctx, ev); err != nil {
			t.Fatal(err)
		}
		got, err := env.Store.Upload(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != scangate.UploadFailed || len(got.Errors) != 1 || got.Errors[0].Status != 413 ||
			got.Errors[0].Detail != "the uploaded object holds more than 1024 bytes (limit object_bytes)" {
			t.Errorf("%s: %+v", c.name, got)
		}
		if obj.read > c.readMax || !obj.deleted {
			t.Errorf("%s: %d bytes read (at most %d), deleted %v", c.name, obj.read, c.readMax, obj.deleted)
		}
	}
	if rep, err := env.Store.Check(ctx); err != nil || rep.Scans != 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() <= 1024 {
		t.Fatalf("the object is only %d bytes", buf.Len())
	}
	return buf.Bytes()
}

// testWriter sends log lines to the test's log, shown when it fails.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(b))
	if metrics.IsEMF(b) {
		if err := metrics.Check(bytes.TrimSpace(b)); err != nil {
			w.t.Errorf("a metric line breaks the embedded metric format: %v", err)
		}
	}
	return len(b), nil
}
