package scangate

import (
	"strconv"
	"strings"
	"time"
)

// UploadStatus is where a large SARIF upload is (docs/API.md, Large SARIF upload).
type UploadStatus string

// An upload is created awaiting its object; the ingest function claims it
// (processing) and ends it complete or failed. No status goes back.
const (
	UploadAwaiting   UploadStatus = "awaiting_upload"
	UploadProcessing UploadStatus = "processing"
	UploadComplete   UploadStatus = "complete"
	UploadFailed     UploadStatus = "failed"
)

// Final reports whether an upload in status s is done.
func (s UploadStatus) Final() bool { return s == UploadComplete || s == UploadFailed }

// Limits of an upload.
const (
	// MaxUploadBytes bounds the uploaded object (the gzip of the log).
	MaxUploadBytes = 100 << 20
	// UploadURLTTL is how long an upload's presigned URL is valid.
	UploadURLTTL = 15 * time.Minute
	// UploadRetention is how long an upload's record is kept (the table's
	// TTL) for its creator to read its outcome.
	UploadRetention = 7 * 24 * time.Hour
)

// Problem is one reason an upload failed: the problem details (RFC 9457)
// that POST /pr/scan/sarif would answer for the same log.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
}

// UploadOutcome is what processing an upload recorded, or why it failed.
type UploadOutcome struct {
	ScanIDs            []int64
	Results            int
	Recorded           int
	SuppressedInSource int
	Skipped            int
	Errors             []Problem
}

// Upload is a large SARIF upload: the envelope its scans are recorded in
// (a NewScan without type and findings) and where its processing is.
type Upload struct {
	ID        int64
	Status    UploadStatus
	Envelope  NewScan
	CreatedBy int64 // the user who created it
	// TokenHash is the SHA-256 (hex) of the token it was created with: the
	// ingest records it only while that token and its user may still
	// record scans. Never the token itself.
	TokenHash string
	// Creator is who created it, with the token it used: the actor of
	// the scan.record entries of its scans.
	Creator     Actor
	CreatedAt   Time
	ExpiresAt   Time  // when its upload URL stops working
	CompletedAt *Time // when it became complete or failed
	// Lease is, while it is processing, the instant (epoch ms) until which
	// the delivery that claimed it may work on it; after that another
	// delivery of its event may take it over.
	Lease int64
	UploadOutcome
}

// UploadPrefix is where uploaded objects are in the uploads bucket: the
// prefix and the upload's id. The ingest function's trigger and its
// permissions are limited to it.
const UploadPrefix = "uploads/"

// UploadKey is the object key of an upload.
func UploadKey(id int64) string { return UploadPrefix + strconv.FormatInt(id, 10) }

// UploadIDOf reads an upload's id from its object key; false for a key
// that is not an upload's.
func UploadIDOf(key string) (int64, bool) {
	rest, ok := strings.CutPrefix(key, UploadPrefix)
	if !ok || rest == "" || rest[0] < '1' || rest[0] > '9' {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}
