package localstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/localstack/gateway"
)

// EmbeddedS3 is the in-process S3-compatible server (gofakes3, objects in
// memory) on a loopback port, standing in for S3 as minidyn stands in for
// DynamoDB. Like S3 it admits only requests signed (SigV4, presigned or in
// the Authorization header) by the credentials it is started with
// (RequireSigV4); make test-s3 runs the same flows against S3Proxy.
type EmbeddedS3 struct {
	URL string
	srv *http.Server
}

// StartEmbeddedS3 starts the embedded S3-compatible server in region,
// admitting the requests any of creds signs.
func StartEmbeddedS3(region string, creds ...aws.Credentials) (*EmbeddedS3, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the embedded S3 server: %w", err)
	}
	faker := gofakes3.New(s3mem.New(), gofakes3.WithoutVersioning())
	srv := &http.Server{Handler: RequireSigV4(faker.Server(), region, creds...), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &EmbeddedS3{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the embedded S3 server.
func (e *EmbeddedS3) Close() error { return e.srv.Close() }

// ensureBucket creates the bucket unless it exists.
func ensureBucket(ctx context.Context, c *s3.Client, name string) error {
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name})
	var owned *types.BucketAlreadyOwnedByYou
	var exists *types.BucketAlreadyExists
	var api smithy.APIError
	switch {
	case err == nil, errors.As(err, &owned), errors.As(err, &exists):
		return nil
	case errors.As(err, &api) && strings.HasPrefix(api.ErrorCode(), "BucketAlready"):
		return nil
	}
	return fmt.Errorf("create bucket %s: %w", name, err)
}

// Notifier delivers S3's ObjectCreated events locally: it lists the
// objects under a prefix of the bucket every interval and invokes the
// function with an events.S3Event, as S3 would, for each object it has
// not seen (by key and ETag). Like Lambda for S3's asynchronous
// invocations, it tries a failed invocation twice more. It works on any
// S3-compatible server, the embedded one or S3_ENDPOINT's.
type Notifier struct {
	Client   *s3.Client
	Bucket   string
	Prefix   string
	Region   string
	Interval time.Duration
	Retry    time.Duration // between tries of a failed invocation
	Invoke   func(ctx context.Context, event []byte) error
	Log      *slog.Logger

	seen map[string]string
	seq  int64
	wg   sync.WaitGroup
}

// Run delivers events until ctx ends, then waits for the invocations under
// way.
func (n *Notifier) Run(ctx context.Context) {
	n.seen = map[string]string{}
	t := time.NewTicker(n.Interval)
	defer t.Stop()
	for {
		if err := n.poll(ctx); err != nil && ctx.Err() == nil {
			n.Log.WarnContext(ctx, "list uploaded objects", "bucket", n.Bucket, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			n.wg.Wait()
			return
		case <-t.C:
		}
	}
}

// poll lists the prefix once and delivers an event for each new object.
func (n *Notifier) poll(ctx context.Context) error {
	listed := map[string]bool{}
	p := s3.NewListObjectsV2Paginator(n.Client, &s3.ListObjectsV2Input{Bucket: &n.Bucket, Prefix: &n.Prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			k, etag := aws.ToString(o.Key), strings.Trim(aws.ToString(o.ETag), `"`)
			listed[k] = true
			if n.seen[k] == etag {
				continue
			}
			n.seen[k] = etag
			n.seq++
			ev := n.event(k, aws.ToInt64(o.Size), etag)
			n.wg.Go(func() { n.deliver(ctx, k, ev) })
		}
	}
	for k := range n.seen {
		if !listed[k] {
			delete(n.seen, k)
		}
	}
	return nil
}

// event is the ObjectCreated event S3 sends for an object.
func (n *Notifier) event(key string, size int64, etag string) []byte {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.QueryEscape(s)
	}
	ev := events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: n.Region, EventTime: time.Now().UTC(),
		EventName: "ObjectCreated:Put", PrincipalID: events.S3UserIdentity{PrincipalID: "local"},
		S3: events.S3Entity{
			SchemaVersion: "1.0", ConfigurationID: "Uploaded",
			Bucket: events.S3Bucket{Name: n.Bucket, Arn: "arn:aws:s3:::" + n.Bucket, OwnerIdentity: events.S3UserIdentity{PrincipalID: "local"}},
			Object: events.S3Object{Key: strings.Join(segs, "/"), Size: size, ETag: etag, Sequencer: fmt.Sprintf("%016X", n.seq)},
		},
	}}}
	b, _ := json.Marshal(ev)
	return b
}

// deliver invokes the function with an event, three tries at most.
func (n *Notifier) deliver(ctx context.Context, key string, ev []byte) {
	for try := 1; ; try++ {
		err := n.Invoke(ctx, ev)
		if err == nil {
			return
		}
		n.Log.ErrorContext(ctx, "S3 event invocation failed", "key", key, "try", try, "error", err.Error())
		if try == 3 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(n.Retry):
		}
	}
}

// openUploads opens the uploads bucket on the embedded S3 server or on
// o.S3Endpoint, and creates it.
func (s *Stack) openUploads(ctx context.Context, o Options) error {
	if o.S3Endpoint == "" {
		// The region and credentials openBucket's clients sign with: this
		// process's, or the placeholders of a client of an endpoint.
		region, provider, err := awsclient.FromEnv(os.Getenv, "embedded", "s3")
		if err != nil {
			return err
		}
		creds, err := provider.Retrieve(ctx)
		if err != nil {
			return fmt.Errorf("the embedded S3 server's credentials: %w", err)
		}
		if s.S3, err = StartEmbeddedS3(region, creds); err != nil {
			return err
		}
	}
	b, err := s.openBucket(o)
	if err != nil {
		return err
	}
	if err := ensureBucket(ctx, b.Client(), o.Bucket); err != nil {
		return err
	}
	s.Bucket = b
	return nil
}

// openBucket opens a client of the uploads bucket, as a function's main
// does, from this process's environment with the bucket and endpoint set.
func (s *Stack) openBucket(o Options, optFns ...func(*s3.Options)) (*bucket.Bucket, error) {
	endpoint := o.S3Endpoint
	if s.S3 != nil {
		endpoint = s.S3.URL
	}
	env := map[string]string{"UPLOADS_BUCKET": o.Bucket, "S3_ENDPOINT": endpoint}
	return bucket.Open(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}, optFns...)
}

// startNotifiers starts a notifier for each S3 event of the template, on
// the uploads bucket, until run ends.
func (s *Stack) startNotifiers(run context.Context, t *gateway.Template, o Options) {
	interval := o.NotifyInterval
	if interval <= 0 {
		interval = DefaultNotifyInterval
	}
	for _, ev := range t.S3Events {
		fn := ev.Function
		n := &Notifier{Client: s.Bucket.Client(), Bucket: s.Bucket.Name(), Prefix: ev.Prefix,
			Region: s.Bucket.Client().Options().Region, Interval: interval, Retry: time.Second, Log: o.Log,
			Invoke: func(ctx context.Context, event []byte) error { _, err := s.Invoke(ctx, fn, event); return err }}
		s.triggers.Go(func() { n.Run(run) })
	}
}

// DefaultNotifyInterval is how often the local stack lists the uploads
// prefix for new objects.
const DefaultNotifyInterval = 200 * time.Millisecond
