package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// UploadStore keeps large SARIF uploads.
type UploadStore interface {
	AuthorityStore
	CreateUpload(ctx context.Context, u scangate.Upload, retention time.Duration) (scangate.Upload, error)
	Upload(ctx context.Context, id int64) (scangate.Upload, error)
}

// Bucket is the uploads bucket as the upload functions use it
// (internal/bucket); internal/api does not link the S3 client.
type Bucket interface {
	// PresignPut presigns the PUT of an object under key, valid for ttl:
	// its URL, the headers the client must send, and when it expires.
	PresignPut(ctx context.Context, key string, ttl time.Duration) (string, map[string]string, time.Time, error)
	// Open starts reading an object: its body and its size as the bucket
	// reports it; an error that is fs.ErrNotExist when there is none.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	Delete(ctx context.Context, key string) error
}

// createdUploadBody is the answer of POST /pr/scan/sarif/uploads.
type createdUploadBody struct {
	ID            int64             `json:"id"`
	Status        string            `json:"status"`
	UploadURL     string            `json:"upload_url"`
	UploadHeaders map[string]string `json:"upload_headers"`
	ExpiresAt     scangate.Time     `json:"expires_at"`
}

// CreateSARIFUpload is POST /pr/scan/sarif/uploads: the envelope of POST
// /pr/scan/sarif without its log; the answer is a presigned URL the client
// PUTs the gzip of the log to, which the ingest function then records.
func CreateSARIFUpload(st UploadStore, b Bucket, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "CreateSARIFUpload", Roles: recordRoles, Users: st, ScanScope: true, RepoScope: true, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			var p scangate.Problems
			f := readFields(m, "", &p)
			env := readEnvelope(f, "completed")
			f.done()
			if len(p) == 0 {
				env.ValidateEnvelope(&p)
			}
			err = p.Err()
			if err == nil {
				err = mayRecord(c, env.VcID, env.RepoID)
			}
			if err != nil {
				return Reply{}, err
			}
			at := scangate.At(now())
			u, err := st.CreateUpload(ctx, scangate.Upload{Envelope: env, CreatedBy: c.ID, TokenHash: c.TokenHash, Creator: *c.Actor(), CreatedAt: at,
				ExpiresAt: scangate.At(at.Add(scangate.UploadURLTTL))}, scangate.UploadRetention)
			if err != nil {
				return Reply{}, err
			}
			url, headers, expires, err := b.PresignPut(ctx, scangate.UploadKey(u.ID), scangate.UploadURLTTL)
			if err != nil {
				return Reply{}, err
			}
			// The URL is a credential until it expires: Secret keeps caches from it.
			return Reply{Status: http.StatusCreated, Secret: true, Location: location(req, "/pr/scan/sarif/uploads", u.ID),
				Body: createdUploadBody{ID: u.ID, Status: string(u.Status), UploadURL: url, UploadHeaders: headers,
					ExpiresAt: scangate.At(expires)}}, nil
		}}
}

// GetSARIFUpload is GET /pr/scan/sarif/uploads/{upload_id}: where an
// upload is, and what it recorded or why it failed.
func GetSARIFUpload(st UploadStore, log *slog.Logger) Endpoint {
	return getOne(Endpoint{Name: "GetSARIFUpload", Roles: readRoles, RepoScope: true, Log: log}, "upload_id", st.Upload,
		inRepo[scangate.Upload]("upload %d does not exist"), scangate.ViewUpload)
}
