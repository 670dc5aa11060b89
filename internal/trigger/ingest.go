package trigger

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/sarif"
	"github.com/scangate/scangate/internal/scangate"
)

// IngestStore is what the ingest function reads and writes.
type IngestStore interface {
	api.ScanStore
	DropUnrecorded(ctx context.Context, once string) error
	Upload(ctx context.Context, id int64) (scangate.Upload, error)
	ClaimUpload(ctx context.Context, id int64, now time.Time, lease int64) (scangate.Upload, bool, error)
	FinishUpload(ctx context.Context, u scangate.Upload, lease int64, o scangate.UploadOutcome, now time.Time) (bool, error)
	ReleaseUpload(ctx context.Context, id, lease int64) (bool, error)
}

// UploadLimits are the limits of a log uploaded through S3: the
// contract's 20 runs of 25,000 results (500,000 results in all), of which
// one run may hold 100,000 (a container image or monorepo scan is one
// run of one scanner), and 100,000 findings of one scan (type and
// category); the rest as POST /pr/scan/sarif (docs/DECISIONS.md).
func UploadLimits() sarif.Limits {
	l := sarif.DefaultLimits()
	l.Results, l.ResultsPerRun, l.FindingsPerType = 500_000, 100_000, 100_000
	return l
}

// Ingest defaults.
const (
	// DefaultIngestPoll is how often a delivery that finds another one
	// processing its upload looks again.
	DefaultIngestPoll = 2 * time.Second
	// finishMargin is kept, of the function's time, to write the upload's
	// outcome after its work is cut short.
	finishMargin = 10 * time.Second
	// defaultLease is the lease of a delivery whose context has no deadline.
	defaultLease = 15 * time.Minute
)

// Ingest is the function that S3's ObjectCreated events invoke for the
// objects of the uploads prefix: it records each upload's log as POST
// /pr/scan/sarif records one, and sets the upload's status. Every delivery
// of an event may come more than once, or twice at once: one delivery
// claims the upload (a conditional write, under a lease that ends with its
// function's time); another waits while that lease lasts, and takes over
// only if it ends with the upload still processing. Scans are recorded
// under once keys (upload#<id>), so no redelivery or takeover records
// one twice.
type Ingest struct {
	Store    IngestStore
	Bucket   api.Bucket
	Log      *slog.Logger
	Now      func() time.Time
	MaxBytes int64         // the object's size: scangate.MaxUploadBytes, or lower
	Limits   sarif.Limits  // UploadLimits()
	Poll     time.Duration // DefaultIngestPoll
}

// NewIngest builds the ingest function of uploads: the object of each
// upload read from b, at most maxBytes (config's UploadMaxBytes).
func NewIngest(st IngestStore, b api.Bucket, maxBytes int64, now func() time.Time, log *slog.Logger) S3Handler {
	return Ingest{Store: st, Bucket: b, Log: log, Now: now, MaxBytes: maxBytes, Limits: UploadLimits(), Poll: DefaultIngestPoll}.Handle
}

// Handle processes every record of an event; it returns an error (so
// that Lambda retries the event) only for a failure a retry may overcome.
func (g Ingest) Handle(ctx context.Context, ev events.S3Event) error {
	var errs []error
	for _, r := range ev.Records {
		if err := g.record(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (g Ingest) record(ctx context.Context, r events.S3EventRecord) error {
	key := r.S3.Object.URLDecodedKey
	if key == "" {
		key = r.S3.Object.Key
	}
	id, ok := scangate.UploadIDOf(key)
	if !ok || !strings.HasPrefix(r.EventName, "ObjectCreated:") {
		g.Log.WarnContext(ctx, "ignored an event that is not an upload's", "event", r.EventName, "key", key)
		return nil
	}
	for {
		u, err := g.Store.Upload(ctx, id)
		switch {
		case scangate.KindOf(err) == scangate.KindNotFound:
			g.Log.WarnContext(ctx, "an object without an upload", "upload_id", id)
			g.delete(ctx, key, id)
			return nil
		case err != nil:
			return fmt.Errorf("upload %d: %w", id, err)
		case u.Status.Final():
			g.Log.InfoContext(ctx, "upload already processed", "upload_id", id, "status", u.Status)
			g.delete(ctx, key, id)
			return nil
		case u.Status == scangate.UploadProcessing && u.Lease >= g.Now().UnixMilli():
			if err := g.wait(ctx, id); err != nil {
				return err
			}
			continue
		}
		lease := g.lease(ctx)
		takeover := u.Status == scangate.UploadProcessing // from a delivery that died or gave it up
		u, claimed, err := g.Store.ClaimUpload(ctx, id, g.Now(), lease)
		if err != nil {
			return fmt.Errorf("upload %d: %w", id, err)
		}
		if claimed {
			return g.process(ctx, u, key, r.S3.Object.Size, lease, takeover)
		}
	}
}

// wait lets another delivery work on an upload for a while.
func (g Ingest) wait(ctx context.Context, id int64) error {
	poll := g.Poll
	if poll <= 0 {
		poll = DefaultIngestPoll
	}
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("upload %d: another delivery is still processing it: %w", id, ctx.Err())
	case <-t.C:
		return nil
	}
}

// lease is until when this delivery may hold an upload: its function's
// deadline.
func (g Ingest) lease(ctx context.Context) int64 {
	if d, ok := ctx.Deadline(); ok {
		return d.UnixMilli()
	}
	return g.Now().Add(defaultLease).UnixMilli()
}

// process records a claimed upload and ends it complete or failed. A
// delivery that takes over from one before first deletes the findings
// that one wrote and did not commit.
func (g Ingest) process(ctx context.Context, u scangate.Upload, key string, size, lease int64, takeover bool) error {
	start := time.Now()
	work, cancel := context.WithDeadline(ctx, time.UnixMilli(lease).Add(-finishMargin))
	defer cancel()
	once := "upload#" + strconv.FormatInt(u.ID, 10)
	var o scangate.UploadOutcome
	var err error
	if takeover {
		err = g.Store.DropUnrecorded(work, once)
	}
	if err == nil {
		creator := u.Creator
		who := scangate.Who{Actor: &creator, RequestID: "upload-" + strconv.FormatInt(u.ID, 10)}
		opts := sarif.Options{Limits: g.Limits, Category: u.Envelope.Category}
		read := func(h sarif.Handler) (scangate.NewScan, sarif.Counts, error) {
			c, err := g.read(work, key, size, opts, h)
			return u.Envelope, c, err
		}
		out, rerr := api.RecordLog(work, g.Store, read, api.Recording{Who: who, At: g.Now(), Once: once,
			Check: func(ctx context.Context) error { return g.authority(ctx, u) }})
		o = scangate.UploadOutcome{Results: out.Results, Recorded: out.Recorded,
			SuppressedInSource: out.SuppressedInSource, Skipped: out.Skipped}
		for _, sc := range out.Scans {
			o.ScanIDs = append(o.ScanIDs, sc.ID)
		}
		err = rerr
	}
	if err != nil {
		if !api.Refused(err) && ctx.Err() == nil && work.Err() == nil {
			return g.release(ctx, u.ID, lease, err)
		}
		o = scangate.UploadOutcome{Errors: []scangate.Problem{api.ProblemOf(permanentError(err, work))}}
	}
	done, err := g.Store.FinishUpload(ctx, u, lease, o, g.Now())
	if err != nil {
		return fmt.Errorf("upload %d: %w", u.ID, err)
	}
	if !done {
		g.Log.WarnContext(ctx, "upload taken over by another delivery", "upload_id", u.ID)
		return nil
	}
	g.delete(ctx, key, u.ID)
	g.Log.InfoContext(ctx, "upload processed", "upload_id", u.ID, "failed", len(o.Errors) > 0, "results", o.Results,
		"recorded", o.Recorded, "scan_ids", o.ScanIDs, "latency_ms", time.Since(start).Milliseconds())
	return nil
}

// recorders are the roles that may record scans (POST /pr/scan/sarif).
var recorders = []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}

// authority checks an upload's creator as a write checks its caller, as
// of now, when its scans are about to be recorded: the token it was
// created with and the creator's record, in one round trip. A token
// revoked or expired, a creator deactivated since the token was issued
// (401) or no longer allowed to record scans (403) fails the upload.
func (g Ingest) authority(ctx context.Context, u scangate.Upload) error {
	tok, user, err := g.Store.TokenUser(ctx, u.TokenHash, u.CreatedBy)
	if err != nil {
		return fmt.Errorf("check the upload's creator: %w", err)
	}
	if reason := auth.Refusal(tok, user, u.CreatedBy, g.Now()); reason != "" {
		return api.Failf(http.StatusUnauthorized, "the upload's creator may no longer record scans with the token it was created with: %s", reason)
	}
	if !(scangate.Caller{Role: user.Role}).Allowed(recorders...) {
		return api.Failf(http.StatusForbidden, "the upload's creator may no longer record scans: the role %s may not", user.Role)
	}
	return nil
}

// release gives up an upload after a failure a retry may overcome, and
// returns that failure for Lambda to retry the event.
func (g Ingest) release(ctx context.Context, id, lease int64, cause error) error {
	if _, err := g.Store.ReleaseUpload(ctx, id, lease); err != nil {
		g.Log.ErrorContext(ctx, "release upload", "upload_id", id, "error", err.Error())
	}
	return fmt.Errorf("upload %d: %w", id, cause)
}

// permanentError is the error an upload fails with: err, or, when the
// work ran out of its function's time, a problem that says so.
func permanentError(err error, work context.Context) error {
	if api.Refused(err) {
		return err
	}
	if errors.Is(work.Err(), context.DeadlineExceeded) {
		return api.Failf(http.StatusInternalServerError, "the upload was not processed within the ingest function's time limit")
	}
	return err
}

// read reads an upload's object, at most MaxBytes of it whatever its size
// says, as a gzip of a SARIF log, and hands each run to h.
func (g Ingest) read(ctx context.Context, key string, size int64, o sarif.Options, h sarif.Handler) (sarif.Counts, error) {
	maxBytes := g.MaxBytes
	if maxBytes <= 0 || maxBytes > scangate.MaxUploadBytes {
		maxBytes = scangate.MaxUploadBytes
	}
	tooLarge := api.Failf(http.StatusRequestEntityTooLarge, "the uploaded object holds more than %d bytes (limit object_bytes)", maxBytes)
	if size > maxBytes {
		return sarif.Counts{}, tooLarge
	}
	body, size, err := g.Bucket.Open(ctx, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return sarif.Counts{}, api.Failf(http.StatusNotFound, "the uploaded object no longer exists")
	case err != nil:
		return sarif.Counts{}, fmt.Errorf("read the uploaded object: %w", err)
	}
	defer func() { _ = body.Close() }()
	if size > maxBytes {
		return sarif.Counts{}, tooLarge
	}
	c := &capped{r: body, left: maxBytes}
	counts, err := sarif.ReadGzip(c, o, h)
	switch {
	case c.over:
		return counts, tooLarge
	case c.err != nil:
		return counts, fmt.Errorf("read the uploaded object: %w", c.err)
	}
	return counts, api.SARIFError(err)
}

// capped reads at most left bytes of r and notes whether r held more, and
// any error of r itself (rather than of what reads it).
type capped struct {
	r    io.Reader
	left int64
	over bool
	err  error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n > 0 {
			c.over = true
			return 0, errors.New("the object is larger than its limit")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// delete deletes a processed upload's object; the bucket's lifecycle
// deletes one left behind after a day.
func (g Ingest) delete(ctx context.Context, key string, id int64) {
	if err := g.Bucket.Delete(context.WithoutCancel(ctx), key); err != nil {
		g.Log.ErrorContext(ctx, "delete uploaded object", "upload_id", id, "error", err.Error())
	}
}
