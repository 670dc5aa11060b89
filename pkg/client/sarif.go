package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxInlineBody is the largest body POST /pr/scan/sarif accepts (Lambda's
// synchronous payload limit); a log whose body would be larger goes
// through a presigned upload.
const MaxInlineBody = 6_000_000

// MaxUpload is the largest gzip of a log a presigned upload accepts.
const MaxUpload = 100 << 20

// sarifMember opens the member that carries the log in an inline body.
const sarifMember = `,"sarif":"`

// InlineBody is the body of POST /pr/scan/sarif for env and the gzip of a
// log: the envelope's members and "sarif", the base64 of the gzip.
func InlineBody(env Envelope, gz []byte) ([]byte, error) {
	e, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("the envelope: %w", err)
	}
	b := make([]byte, 0, InlineSize(len(e), len(gz)))
	b = append(b, e[:len(e)-1]...)
	b = append(b, sarifMember...)
	b = base64.StdEncoding.AppendEncode(b, gz)
	return append(b, `"}`...), nil
}

// InlineSize is the exact size of the inline body of an envelope whose
// JSON is envelope bytes long and a gzip of gz bytes.
func InlineSize(envelope, gz int) int {
	return envelope - 1 + len(sarifMember) + base64.StdEncoding.EncodedLen(gz) + len(`"}`)
}

// FitsInline tells whether the log's gzip goes inline with env.
func FitsInline(env Envelope, gz int) (bool, error) {
	e, err := json.Marshal(env)
	if err != nil {
		return false, fmt.Errorf("the envelope: %w", err)
	}
	return InlineSize(len(e), gz) <= MaxInlineBody, nil
}

// RecordSARIF records the scans of a log (its gzip) in one request.
func (c *Client) RecordSARIF(ctx context.Context, env Envelope, gz []byte) (SARIFResult, error) {
	body, err := InlineBody(env, gz)
	if err != nil {
		return SARIFResult{}, err
	}
	var r SARIFResult
	err = c.call(ctx, request{method: http.MethodPost, path: "/pr/scan/sarif", body: body}, &r)
	return r, err
}

// CreateUpload starts a presigned upload of a log for env.
func (c *Client) CreateUpload(ctx context.Context, env Envelope) (CreatedUpload, error) {
	var u CreatedUpload
	err := c.write(ctx, http.MethodPost, "/pr/scan/sarif/uploads", env, &u)
	return u, err
}

// PutUpload sends the gzip of the log, size bytes read from body, to the
// upload's presigned URL with its headers. The URL is the credential: it
// never appears in an error.
func (c *Client) PutUpload(ctx context.Context, u CreatedUpload, body io.Reader, size int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.UploadURL, body)
	if err != nil {
		return fmt.Errorf("upload %d: %w", u.ID, redact(err))
	}
	req.ContentLength = size
	for k, v := range u.UploadHeaders {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("upload %d: the PUT to its presigned URL got no answer: %w", u.ID, redact(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Errorf("upload %d: the PUT to its presigned URL answered %d: %s", u.ID, resp.StatusCode, s3Error(b))
}

// s3Error is the code and message of an S3 error answer.
func s3Error(b []byte) string {
	var e struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(b, &e) == nil && e.Code != "" {
		return strings.TrimSpace(e.Code + " " + e.Message)
	}
	return truncate(strings.TrimSpace(string(bytes.ToValidUTF8(b, nil))), 300)
}

// Upload reads a large upload.
func (c *Client) Upload(ctx context.Context, id int64) (Upload, error) {
	var u Upload
	err := c.get(ctx, "/pr/scan/sarif/uploads/"+strconv.FormatInt(id, 10), nil, &u)
	return u, err
}

// Poll paces the reads of an upload being processed: First, then doubling
// up to Max.
type Poll struct {
	First, Max time.Duration
}

// DefaultPoll starts at a quarter of a second and backs off to 5 s.
var DefaultPoll = Poll{First: 250 * time.Millisecond, Max: 5 * time.Second}

// AwaitUpload reads the upload until it is complete or failed, or ctx
// ends (its deadline is the caller's --timeout).
func (c *Client) AwaitUpload(ctx context.Context, id int64, p Poll) (Upload, error) {
	wait := p.First
	for {
		u, err := c.Upload(ctx, id)
		if err != nil {
			return u, err
		}
		if u.Status == "complete" || u.Status == "failed" {
			return u, nil
		}
		if err := sleep(ctx, wait); err != nil {
			return u, fmt.Errorf("upload %d is still %s: %w", id, u.Status, err)
		}
		wait = min(2*wait, p.Max)
	}
}
