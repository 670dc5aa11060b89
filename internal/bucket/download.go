package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// PartSize is the size of each part of an object written in parts but the
// last: S3's least.
const PartSize = 5 << 20

// ObjectWriter writes an object whose length is known only at its end,
// holding one part in memory: an object shorter than PartSize bytes is
// one PutObject; one of PartSize bytes or more a multipart upload, aborted when writing it
// fails (and removed by the bucket's rule for incomplete uploads
// otherwise). It is written by hand rather than with the SDK's transfer
// manager, which would link the SDK's configuration chain into the
// function that uses it (docs/DECISIONS.md).
type ObjectWriter struct {
	ctx         context.Context
	b           *Bucket
	key         string
	contentType string
	uploadID    string
	parts       []types.CompletedPart
	buf         bytes.Buffer
	err         error
}

// Object is an object being written: Close stores it, Abort abandons it
// (an alias, so that an interface of another package may name the same
// type).
type Object = interface {
	io.WriteCloser
	Abort()
}

// Create starts writing the object key of contentType: an ObjectWriter.
func (b *Bucket) Create(ctx context.Context, key, contentType string) Object {
	return &ObjectWriter{ctx: ctx, b: b, key: key, contentType: contentType}
}

// Write buffers p, sending each full part.
func (w *ObjectWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), PartSize-w.buf.Len())
		w.buf.Write(p[:k])
		p = p[k:]
		if w.buf.Len() == PartSize {
			if err := w.sendPart(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *ObjectWriter) sendPart() error {
	c := w.b.client
	if w.uploadID == "" {
		out, err := c.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: &w.b.name, Key: &w.key, ContentType: &w.contentType})
		if err != nil {
			w.err = fmt.Errorf("start the upload of %s: %w", w.key, err)
			return w.err
		}
		w.uploadID = aws.ToString(out.UploadId)
	}
	n := int32(len(w.parts) + 1)
	out, err := c.UploadPart(w.ctx, &s3.UploadPartInput{Bucket: &w.b.name, Key: &w.key, UploadId: &w.uploadID, PartNumber: &n,
		Body: bytes.NewReader(w.buf.Bytes()), ContentLength: aws.Int64(int64(w.buf.Len()))})
	if err != nil {
		w.err = fmt.Errorf("upload part %d of %s: %w", n, w.key, err)
		w.abort()
		return w.err
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: &n})
	w.buf.Reset()
	return nil
}

// abort abandons a multipart upload (its parts are deleted); a failure is
// left to the bucket's rule for incomplete uploads.
func (w *ObjectWriter) abort() {
	if w.uploadID != "" {
		_, _ = w.b.client.AbortMultipartUpload(context.WithoutCancel(w.ctx),
			&s3.AbortMultipartUploadInput{Bucket: &w.b.name, Key: &w.key, UploadId: &w.uploadID})
	}
}

// Close sends what is left and completes the object.
func (w *ObjectWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	c := w.b.client
	if w.uploadID == "" {
		_, err := c.PutObject(w.ctx, &s3.PutObjectInput{Bucket: &w.b.name, Key: &w.key, ContentType: &w.contentType,
			Body: bytes.NewReader(w.buf.Bytes()), ContentLength: aws.Int64(int64(w.buf.Len()))})
		if err != nil {
			w.err = fmt.Errorf("put %s: %w", w.key, err)
		}
		return w.err
	}
	if w.buf.Len() > 0 {
		if err := w.sendPart(); err != nil {
			return err
		}
	}
	_, err := c.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{Bucket: &w.b.name, Key: &w.key, UploadId: &w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts}})
	if err != nil {
		w.err = fmt.Errorf("complete the upload of %s: %w", w.key, err)
		w.abort()
	}
	return w.err
}

// Abort abandons the object after a failure of its writer's own: nothing
// is stored.
func (w *ObjectWriter) Abort() {
	if w.err == nil {
		w.err = errors.New("aborted")
	}
	w.abort()
}

// PresignGet presigns the GET of the object key, valid for ttl: its URL
// and when it expires.
func (b *Bucket) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	req, err := b.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &b.name, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("presign get %s: %w", key, err)
	}
	expires, err := expiry(req.URL)
	if err != nil {
		return "", time.Time{}, err
	}
	return req.URL, expires, nil
}
