package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A large SARIF upload (docs/API.md) is one item:
//
//	UPLOAD#<id> / UPLOAD
//
// with its envelope (env, JSON), its creator and the hash of the token it
// was created with, its status, the lease of the delivery
// processing it, its outcome and the table's TTL. Ids come from the
// counter COUNTER#upload. Status changes are conditional writes: only one
// delivery of its event claims it, and a final status never changes.

// Attributes of an upload item.
const (
	aEnvelope    = "env"
	aExpiresURL  = "url_expires_at"
	aCompletedAt = "completed_at"
	aLease       = "lease" // epoch ms; 0 when no delivery holds it
	aScanIDs     = "scan_ids"
	aResults     = "results"
	aRecorded    = "recorded"
	aSuppressed  = "suppressed_in_source"
	aSkipped     = "skipped"
	aErrors      = "errors" // JSON array of problems
)

// lUpload labels the upload of a transaction.
const lUpload = "upload"

func uploadKey(id int64) item { return key("UPLOAD#"+strconv.FormatInt(id, 10), "UPLOAD") }

// envelope is the stored form of an upload's envelope.
type envelope struct {
	VcType       string          `json:"vc_type"`
	VcID         int64           `json:"vc_id"`
	VcName       string          `json:"vc_name"`
	RepoID       int64           `json:"repo_id"`
	RepoName     string          `json:"repo_name"`
	WebhookID    int64           `json:"webhook_id"`
	PRNumber     int64           `json:"pr_id"`
	PRName       string          `json:"pr_name"`
	PRLink       string          `json:"pr_link"`
	Status       string          `json:"status"`
	StatURL      *string         `json:"stat_url"`
	OtherDetails json.RawMessage `json:"other_details,omitempty"`
	Category     string          `json:"category,omitempty"`
	CommitSHA    string          `json:"commit_sha,omitempty"`
	Ref          string          `json:"ref,omitempty"`
	Branch       string          `json:"branch,omitempty"`
	BaseRef      string          `json:"base_ref,omitempty"`
	BaseSHA      string          `json:"base_sha,omitempty"`
}

func envelopeOf(ns scangate.NewScan) envelope {
	return envelope{VcType: ns.VcType, VcID: ns.VcID, VcName: ns.VcName, RepoID: ns.RepoID, RepoName: ns.RepoName,
		WebhookID: ns.WebhookID, PRNumber: ns.PR.Number, PRName: ns.PR.Name, PRLink: ns.PR.Link, Status: ns.Status,
		StatURL: ns.StatURL, OtherDetails: ns.OtherDetails, Category: ns.Category, CommitSHA: ns.CommitSHA, Ref: ns.Ref, Branch: ns.Branch, BaseRef: ns.BaseRef, BaseSHA: ns.BaseSHA}
}

func (e envelope) scan() scangate.NewScan {
	return scangate.NewScan{VcType: e.VcType, VcID: e.VcID, VcName: e.VcName, RepoID: e.RepoID, RepoName: e.RepoName,
		WebhookID: e.WebhookID, PR: scangate.PRRef{Number: e.PRNumber, Name: e.PRName, Link: e.PRLink}, Status: e.Status,
		StatURL: e.StatURL, OtherDetails: e.OtherDetails, Category: e.Category, CommitSHA: e.CommitSHA, Ref: e.Ref, Branch: e.Branch, BaseRef: e.BaseRef, BaseSHA: e.BaseSHA}
}

// CreateUpload stores a new upload awaiting its object, under the next
// upload id, and returns it. Its record is kept for retention.
func (s *Store) CreateUpload(ctx context.Context, u scangate.Upload, retention time.Duration) (scangate.Upload, error) {
	id, err := s.nextID(ctx, "upload")
	if err != nil {
		return scangate.Upload{}, err
	}
	u.ID, u.Status, u.Lease, u.UploadOutcome, u.CompletedAt = id, scangate.UploadAwaiting, 0, scangate.UploadOutcome{}, nil
	it, err := uploadItem(u, retention)
	if err != nil {
		return scangate.Upload{}, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(" + ref(aPK) + ")"),
		ExpressionAttributeNames: map[string]string{ref(aPK): aPK},
	})
	if err != nil {
		return scangate.Upload{}, dbErr("create upload", err)
	}
	return u, nil
}

// uploadItem is a new upload's item: its envelope as JSON, kept for
// retention.
func uploadItem(u scangate.Upload, retention time.Duration) (item, error) {
	env, err := scangate.PlainJSON(envelopeOf(u.Envelope))
	if err != nil {
		return nil, fmt.Errorf("encode upload envelope: %w", err)
	}
	return merge(uploadKey(u.ID), item{
		aID: num(u.ID), aStatus: str(string(u.Status)), aEnvelope: str(string(env)), aUserID: num(u.CreatedBy), aTokenHash: str(u.TokenHash),
		aActorName: str(u.Creator.Username), aActorToken: num(u.Creator.TokenID),
		aCreatedAt: str(u.CreatedAt.String()), aExpiresURL: str(u.ExpiresAt.String()), aLease: num(0),
		aTTL: num(u.CreatedAt.Add(retention).Unix()),
	}), nil
}

// Upload reads an upload (strongly consistent).
func (s *Store) Upload(ctx context.Context, id int64) (scangate.Upload, error) {
	it, err := s.getItem(ctx, "get upload", uploadKey(id))
	if err != nil {
		return scangate.Upload{}, err
	}
	if it == nil {
		return scangate.Upload{}, scangate.Errorf(scangate.KindNotFound, "upload %d does not exist", id)
	}
	return uploadFrom(it)
}

// ClaimUpload makes the caller the one delivery processing an upload,
// until lease (epoch ms): it succeeds while the upload awaits its object,
// or is processing under a lease that ended before now (the delivery that
// held it died). It returns the upload as it is after the attempt and
// whether the caller holds it.
func (s *Store) ClaimUpload(ctx context.Context, id int64, now time.Time, lease int64) (scangate.Upload, bool, error) {
	out, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:              uploadKey(id),
		UpdateExpression: aws.String("SET " + ref(aStatus) + " = :processing, " + ref(aLease) + " = :lease"),
		ConditionExpression: aws.String("attribute_exists(" + ref(aPK) + ") AND (" + ref(aStatus) + " = :awaiting OR (" +
			ref(aStatus) + " = :processing AND " + ref(aLease) + " < :now))"),
		ExpressionAttributeValues: item{
			":processing": str(string(scangate.UploadProcessing)), ":awaiting": str(string(scangate.UploadAwaiting)),
			":lease": num(lease), ":now": num(now.UnixMilli()),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	switch {
	case conditionFailed(err):
		u, err := s.Upload(ctx, id)
		return u, false, err
	case err != nil:
		return scangate.Upload{}, false, dbErr("claim upload", err)
	}
	u, err := uploadFrom(out.Attributes)
	return u, err == nil, err
}

// FinishUpload ends the processing of an upload held under lease: complete
// with what was recorded, or failed with why (o.Errors not empty), with
// its upload.completed or upload.failed event in the same transaction. It
// reports false, changing nothing, when the caller no longer holds it.
func (s *Store) FinishUpload(ctx context.Context, u scangate.Upload, lease int64, o scangate.UploadOutcome, now time.Time) (bool, error) {
	status, typ := scangate.UploadComplete, scangate.EventUploadCompleted
	if len(o.Errors) > 0 {
		status, typ = scangate.UploadFailed, scangate.EventUploadFailed
	}
	problems, err := json.Marshal(o.Errors)
	if err != nil {
		return false, fmt.Errorf("encode upload errors: %w", err)
	}
	at := scangate.At(now)
	done := u
	done.Status, done.Lease, done.CompletedAt, done.UploadOutcome = status, 0, &at, o
	set := "SET " + ref(aStatus) + " = :status, " + ref(aLease) + " = :zero, " +
		ref(aCompletedAt) + " = :at, " + ref(aResults) + " = :results, " +
		ref(aRecorded) + " = :recorded, " + ref(aSuppressed) + " = :sup, " + ref(aSkipped) + " = :skipped, " +
		ref(aErrors) + " = :errors"
	values := item{
		":status": str(string(status)), ":zero": num(0), ":at": str(at.String()),
		":results": num(int64(o.Results)), ":recorded": num(int64(o.Recorded)),
		":sup": num(int64(o.SuppressedInSource)), ":skipped": num(int64(o.Skipped)), ":errors": str(string(problems)),
	}
	if len(o.ScanIDs) > 0 { // none is left out, and reads back as none (no empty list is ever written)
		set += ", " + ref(aScanIDs) + " = :ids"
		values[":ids"] = numList(o.ScanIDs)
	}
	t := s.newTx()
	t.update(lUpload, uploadKey(u.ID), set, values,
		when(ref(aStatus)+" = :processing AND "+ref(aLease)+" = :lease",
			":processing", str(string(scangate.UploadProcessing)), ":lease", num(lease)))
	s.addEvent(t, scangate.NewEvent(typ, now, scangate.ViewUpload(done)))
	err = s.commit(ctx, "finish upload", t)
	switch {
	case failed(err, lUpload):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// ReleaseUpload gives up a lease on an upload still processing, so that
// another delivery of its event may take it over at once (after a failure
// that a retry may overcome). It reports whether the caller still held it.
func (s *Store) ReleaseUpload(ctx context.Context, id, lease int64) (bool, error) {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       uploadKey(id),
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :zero"),
		ConditionExpression:       aws.String(ref(aStatus) + " = :processing AND " + ref(aLease) + " = :lease"),
		ExpressionAttributeValues: item{":zero": num(0), ":processing": str(string(scangate.UploadProcessing)), ":lease": num(lease)},
	})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, dbErr("release upload", err)
	}
	return true, nil
}

func uploadFrom(it item) (scangate.Upload, error) {
	var env envelope
	if err := json.Unmarshal([]byte(getS(it, aEnvelope)), &env); err != nil {
		return scangate.Upload{}, fmt.Errorf("upload %d: read envelope: %w", getN(it, aID), err)
	}
	u := scangate.Upload{
		ID: getN(it, aID), Status: scangate.UploadStatus(getS(it, aStatus)), Envelope: env.scan(),
		CreatedBy: getN(it, aUserID), TokenHash: getS(it, aTokenHash), CreatedAt: getTime(it, aCreatedAt), ExpiresAt: getTime(it, aExpiresURL),
		Creator: scangate.Actor{UserID: getN(it, aUserID), Username: getS(it, aActorName), TokenID: getN(it, aActorToken)},
		Lease:   getN(it, aLease),
		UploadOutcome: scangate.UploadOutcome{
			ScanIDs: getIDs(it, aScanIDs), Results: int(getN(it, aResults)), Recorded: int(getN(it, aRecorded)),
			SuppressedInSource: int(getN(it, aSuppressed)), Skipped: int(getN(it, aSkipped)),
		},
	}
	if _, ok := it[aCompletedAt]; ok {
		at := getTime(it, aCompletedAt)
		u.CompletedAt = &at
	}
	if s := getS(it, aErrors); s != "" {
		if err := json.Unmarshal([]byte(s), &u.Errors); err != nil {
			return scangate.Upload{}, fmt.Errorf("upload %d: read errors: %w", u.ID, err)
		}
	}
	return u, nil
}
