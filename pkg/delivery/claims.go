package delivery

import (
	"context"
	"time"

	"github.com/scangate/scangate/pkg/commitstatus"
	"github.com/scangate/scangate/pkg/store"
	"github.com/scangate/scangate/pkg/webhook"
)

// ClaimStore keeps the commit status claims (pkg/store).
type ClaimStore interface {
	ClaimStatus(ctx context.Context, vcID, repoID int64, sha string, seq int64, now time.Time, lease int64) (string, error)
	ReleaseStatus(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64) error
}

// ClaimHold is how long a claim holds its commit: one post's timeout and a
// margin. A post that dies holding it delays the commit's next status by
// this much at most.
const ClaimHold = webhook.Timeout + 5*time.Second

// claims are the commitstatus.Claims of one post, on the table: a claim
// is granted when no newer gate was claimed and no other post holds the
// commit, and holds it until released or ClaimHold has passed. So the
// statuses of a commit are posted one at a time, and never an older after
// a newer: a conditional claim that also orders, in place of a FIFO queue
// per commit (which would hold a newer status behind an older one's
// retries for hours).
type claims struct {
	st    ClaimStore
	now   func() time.Time
	lease int64
}

func (c *claims) Claim(ctx context.Context, k commitstatus.Key, seq int64) (bool, error) {
	now := c.now()
	c.lease = now.Add(ClaimHold).UnixMilli()
	r, err := c.st.ClaimStatus(ctx, k.VcID, k.RepoID, k.SHA, seq, now, c.lease)
	switch {
	case err != nil:
		return false, err
	case r == store.Busy:
		return false, commitstatus.ErrBusy
	}
	return r == store.Claimed, nil
}

func (c *claims) Release(ctx context.Context, k commitstatus.Key, seq int64) error {
	return c.st.ReleaseStatus(ctx, k.VcID, k.RepoID, k.SHA, seq, c.lease)
}
