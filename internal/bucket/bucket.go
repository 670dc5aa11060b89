// Package bucket is the uploads bucket of large SARIF uploads (docs/API.md)
// on S3 or an S3-compatible server: presigned PUT URLs for clients, and the
// reads and deletes of the ingest function; and the S3 client of every
// function that uses a bucket (NewClient). Only those functions link it
// (and so the S3 client).
package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/scangate/scangate/internal/store"
)

// ContentType is the type a client sends an upload's object with: the
// signature binds it.
const ContentType = "application/gzip"

// Bucket is the uploads bucket.
type Bucket struct {
	name    string
	client  *s3.Client
	presign *s3.PresignClient
}

// Open builds the bucket from what Lambda puts in a function's environment
// (as store.ClientFromEnv builds the DynamoDB client, without the SDK's
// default chain): UPLOADS_BUCKET names it, S3_ENDPOINT, when set, is an
// S3-compatible server addressed path-style.
func Open(getenv func(string) string, optFns ...func(*s3.Options)) (*Bucket, error) {
	name := getenv("UPLOADS_BUCKET")
	if name == "" {
		return nil, errors.New("UPLOADS_BUCKET is not set")
	}
	client, err := NewClient(getenv, optFns...)
	if err != nil {
		return nil, err
	}
	return &Bucket{name: name, client: client, presign: s3.NewPresignClient(client)}, nil
}

// NewClient builds an S3 client from what Lambda puts in a function's
// environment, without the SDK's default chain; S3_ENDPOINT, when set, is
// an S3-compatible server addressed path-style.
func NewClient(getenv func(string) string, optFns ...func(*s3.Options)) (*s3.Client, error) {
	endpoint := getenv("S3_ENDPOINT")
	region, creds, err := store.FromEnv(getenv, endpoint, "s3")
	if err != nil {
		return nil, err
	}
	opts := s3.Options{
		Region:      region,
		Credentials: creds,
		Retryer:     store.NewRetryer(),
		HTTPClient:  store.NewHTTPClient(),
		// A presigned PUT binds no checksum of a body it has not seen.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
		opts.UsePathStyle = true
	}
	return s3.New(opts, optFns...), nil
}

// Name names the bucket.
func (b *Bucket) Name() string { return b.name }

// Client is the bucket's S3 client.
func (b *Bucket) Client() *s3.Client { return b.client }

// PresignPut presigns the PUT of an object of type ContentType under key,
// valid for ttl: its URL, the headers the client must send with it (those
// the signature binds, but Host), and when it expires.
func (b *Bucket) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, map[string]string, time.Time, error) {
	req, err := b.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &b.name, Key: &key, ContentType: aws.String(ContentType),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("presign put %s: %w", key, err)
	}
	headers := map[string]string{}
	for name, vals := range req.SignedHeader {
		if !strings.EqualFold(name, "Host") && len(vals) > 0 {
			headers[http.CanonicalHeaderKey(name)] = strings.Join(vals, ",")
		}
	}
	expires, err := expiry(req.URL)
	if err != nil {
		return "", nil, time.Time{}, err
	}
	return req.URL, headers, expires, nil
}

// expiry reads when a presigned URL expires from its X-Amz-Date and
// X-Amz-Expires.
func expiry(raw string) (time.Time, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return time.Time{}, fmt.Errorf("presigned url: %w", err)
	}
	q := u.Query()
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("presigned url X-Amz-Date: %w", err)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil {
		return time.Time{}, fmt.Errorf("presigned url X-Amz-Expires: %w", err)
	}
	return signed.Add(time.Duration(secs) * time.Second), nil
}

// Open starts reading an object: its body and its size as S3 reports it,
// before any of it is read. An error that is fs.ErrNotExist when it does
// not exist.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &key})
	if err != nil {
		if notFound(err) {
			return nil, 0, fmt.Errorf("get %s: %w", key, fs.ErrNotExist)
		}
		return nil, 0, fmt.Errorf("get %s: %w", key, err)
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

// Delete deletes an object (deleting one that does not exist succeeds).
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.name, Key: &key}); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var api smithy.APIError
	return errors.As(err, &nsk) || errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}
