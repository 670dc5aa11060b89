package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/store"
)

// ClaimStore keeps the commit status claims (internal/store).
type ClaimStore interface {
	ClaimStatus(ctx context.Context, vcID, repoID int64, sha string, seq int64, now time.Time, lease int64) (string, error)
	ReleaseStatus(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64) error
	// CheckRun and SetCheckRun keep a commit's check run (GitHub Apps).
	CheckRun(ctx context.Context, vcID, repoID int64, sha string) (id, seq int64, err error)
	SetCheckRun(ctx context.Context, vcID, repoID int64, sha string, seq, lease, id int64) error
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

// checked posts a commit's status and then its check run (a GitHub App's
// integration), within the same claim: the run's id is read from the
// commit's claim item, the run created when there is none and updated
// otherwise, and its id recorded under the claim, so that a commit has one
// run whatever the retries. A run that shows seq already is left as it is.
type checked struct {
	commitstatus.Poster
	gh     *commitstatus.GitHub
	run    commitstatus.CheckRun
	st     ClaimStore
	claims *claims
	key    commitstatus.Key
	seq    int64
}

func (c checked) Post(ctx context.Context, commit commitstatus.Commit, s commitstatus.Status) error {
	if err := c.Poster.Post(ctx, commit, s); err != nil {
		return err
	}
	k := c.key
	id, shown, err := c.st.CheckRun(ctx, k.VcID, k.RepoID, k.SHA)
	if err != nil {
		return fmt.Errorf("read check run of repository %d@%s: %w", k.RepoID, k.SHA, err)
	}
	if id != 0 && shown >= c.seq {
		return nil
	}
	id, err = c.gh.SyncCheckRun(ctx, commit, id, c.run)
	if id != 0 {
		if serr := c.st.SetCheckRun(ctx, k.VcID, k.RepoID, k.SHA, c.seq, c.claims.lease, id); serr != nil {
			return errors.Join(err, fmt.Errorf("record check run %d of repository %d@%s: %w", id, k.RepoID, k.SHA, serr))
		}
	}
	return err
}
