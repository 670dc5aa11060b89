package commitstatus

import (
	"context"
	"errors"
	"fmt"
)

// The newest gate wins: a status is posted only if no newer gate of the
// same commit has been claimed for posting. pr.gate_changed events carry
// an increasing per-PR sequence; the status of sequence n is claimed (the
// commit's greatest claimed sequence set to n, atomically, if it is not
// greater) before it is posted, and dropped when a greater one is claimed.

// Key names the commit whose statuses are ordered: one integration (vc_id),
// one repository (by id), one commit.
type Key struct {
	VcID   int64
	RepoID int64
	SHA    string
}

// Claims keeps, per commit, the greatest sequence claimed for posting.
type Claims interface {
	// Claim sets the commit's claimed sequence to seq unless it is greater
	// already, atomically, and reports whether it did. A Claims that also
	// serializes the posts of a commit answers ErrBusy (wrapped) while
	// another post of it is under way, and holds the commit until Release.
	Claim(ctx context.Context, k Key, seq int64) (bool, error)
	// Release ends the hold of a claim of seq once its post is done.
	Release(ctx context.Context, k Key, seq int64) error
}

// ErrBusy is the error of a claim made while another post of the same
// commit is under way: the status is to be posted again shortly, not
// dropped. Serializing the posts of a commit is what makes the newest
// status land last: two posts in flight at once could reach the provider
// in either order.
var ErrBusy = errors.New("another status of this commit is being posted")

// Newest reports whether the status of sequence seq may be posted when the
// commit's greatest claimed sequence is claimed (0 when none was): unless a
// newer gate was claimed. An equal sequence is a retry or a redelivery of
// the same gate change: posting the same status again is harmless, and
// needed when its earlier attempt failed after its claim.
func Newest(claimed, seq int64) bool { return seq >= claimed }

// Ordered posts statuses newest-wins.
type Ordered struct {
	Poster Poster
	Claims Claims
}

// Post claims seq for the commit and posts the status, or drops it (false,
// nil) when a newer gate's status was claimed, and releases its claim. An
// error wrapping ErrBusy means that another post of the commit holds it.
func (o Ordered) Post(ctx context.Context, k Key, seq int64, s Status) (bool, error) {
	if seq < 1 {
		return false, fmt.Errorf("status of repository %d@%s: sequence %d is not positive", k.RepoID, k.SHA, seq)
	}
	ok, err := o.Claims.Claim(ctx, k, seq)
	if err != nil {
		return false, fmt.Errorf("claim status %d of repository %d@%s: %w", seq, k.RepoID, k.SHA, err)
	}
	if !ok {
		return false, nil
	}
	err = o.Poster.Post(ctx, Commit{RepoID: k.RepoID, SHA: k.SHA}, s)
	// A release that fails leaves the hold to run out; the post's outcome
	// stands either way.
	_ = o.Claims.Release(ctx, k, seq)
	return true, err
}
