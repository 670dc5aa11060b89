package delivery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/webhook"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// ClaimStore keeps the commit status claims (internal/store).
type ClaimStore interface {
	ClaimStatus(ctx context.Context, vcID, repoID int64, sha string, seq int64, now time.Time, lease int64) (string, error)
	ReleaseStatus(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64) error
	// CheckRun and SetCheckRun keep a commit's check run (GitHub Apps).
	CheckRun(ctx context.Context, vcID, repoID int64, sha string) (store.Shown, error)
	SetCheckRun(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64, sh store.Shown) error
	// ClaimNote, ReleaseNote, Note and SetNote keep a merge request's
	// note (GitLab), claimed as a commit's status is.
	ClaimNote(ctx context.Context, vcID, repoID, number, seq int64, now time.Time, lease int64) (string, error)
	ReleaseNote(ctx context.Context, vcID, repoID, number, seq, lease int64) error
	Note(ctx context.Context, vcID, repoID, number int64) (store.Shown, error)
	SetNote(ctx context.Context, vcID, repoID, number, seq, lease int64, sh store.Shown) error
	// BlockingFindings reads the findings that block a gate (bounded).
	BlockingFindings(ctx context.Context, scans []scangate.BlockingScan, limit, maxRead int) ([]scangate.BlockingFinding, bool, error)
}

// ClaimHold is how long a claim holds its commit: one post's timeout and a
// margin. A post that dies holding it delays the commit's next status by
// this much at most.
const ClaimHold = webhook.Timeout + 5*time.Second

// ShowHold is how long a claim holds its commit (and a merge request's
// note) when the post also reads the gate's blocking findings and sends
// them (a check run's annotations, 21 requests at most; a note): longer
// than the deliverer may run (60 s), so that no other post starts while
// it may still be under way.
const ShowHold = 75 * time.Second

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
	hold  time.Duration // ClaimHold when 0
	lease int64
}

func (c *claims) Claim(ctx context.Context, k commitstatus.Key, seq int64) (bool, error) {
	now := c.now()
	c.lease = now.Add(cmp.Or(c.hold, ClaimHold)).UnixMilli()
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

// shown is what a check run or a note is built from: the gate, the
// dashboard's base URL, and the gate's blocking findings, read when
// needed.
type shown struct {
	st        ClaimStore
	gate      commitstatus.Gate
	dashboard string
}

// findings reads the gate's blocking findings (the first
// commitstatus.MaxAnnotated, new first then the most severe) and whether
// the read stopped before the end.
func (s shown) findings(ctx context.Context) ([]scangate.BlockingFinding, bool, error) {
	scans := commitstatus.BlockingScans(s.gate)
	if len(scans) == 0 {
		return nil, false, nil
	}
	fs, truncated, err := s.st.BlockingFindings(ctx, scans, commitstatus.MaxAnnotated, commitstatus.MaxRead)
	if err != nil {
		return nil, false, fmt.Errorf("read the blocking findings of PR %d: %w", s.gate.PRID, err)
	}
	return fs, truncated, nil
}

// checked posts a commit's status and then its check run (a GitHub App's
// integration), within the same claim: the run's id is read from the
// commit's claim item, the run created when there is none and updated
// otherwise, and its id recorded under the claim, so that a commit has one
// run whatever the retries. A run that shows seq already is left as it is.
// Its annotations are the gate's blocking findings with a path and a
// line, each sent once to the run (GitHub appends them): the keys of
// those sent are recorded with the run, and seq only once all were sent,
// so that a retry sends the rest.
type checked struct {
	commitstatus.Poster
	shown
	gh     *commitstatus.GitHub
	claims *claims
	key    commitstatus.Key
	seq    int64
}

func (c checked) Post(ctx context.Context, commit commitstatus.Commit, s commitstatus.Status) error {
	if err := c.Poster.Post(ctx, commit, s); err != nil {
		return err
	}
	k := c.key
	sh, err := c.st.CheckRun(ctx, k.VcID, k.RepoID, k.SHA)
	if err != nil {
		return fmt.Errorf("read check run of repository %d@%s: %w", k.RepoID, k.SHA, err)
	}
	if sh.ID != 0 && sh.Seq >= c.seq {
		return nil
	}
	fs, _, err := c.findings(ctx)
	if err != nil {
		return err
	}
	run := commitstatus.CheckRunOf(c.gate, c.dashboard, commitstatus.AnnotationsOf(fs))
	run.Annotations = commitstatus.Unsent(run.Annotations, sh.Sent)
	id, n, err := c.gh.SyncCheckRun(ctx, commit, sh.ID, run)
	if id == 0 {
		return err
	}
	next := store.Shown{ID: id, Seq: sh.Seq, Sent: slices.Clone(sh.Sent)}
	for _, a := range run.Annotations[:n] {
		next.Sent = append(next.Sent, a.Key())
	}
	if err == nil {
		next.Seq = c.seq
	}
	if serr := c.st.SetCheckRun(ctx, k.VcID, k.RepoID, k.SHA, c.seq, c.claims.lease, next); serr != nil {
		return errors.Join(err, fmt.Errorf("record check run %d of repository %d@%s: %w", id, k.RepoID, k.SHA, serr))
	}
	return err
}

// noted posts a commit's status and then its merge request's note
// (GitLab): one note per merge request, created once and then edited. The
// note has its own claim, per merge request (its commits' claims are
// apart), taken while the commit's is held: a newer gate's note claimed
// drops this one's, another writer of the note makes this delivery wait
// (commitstatus.ErrBusy), and the note's id and the gate sequence it
// shows are recorded under it, so that a copy of a gate change the note
// shows already sends nothing.
type noted struct {
	commitstatus.Poster
	shown
	gl     *commitstatus.GitLab
	now    func() time.Time
	key    commitstatus.Key
	number int64
	seq    int64
}

func (n noted) Post(ctx context.Context, commit commitstatus.Commit, s commitstatus.Status) error {
	if err := n.Poster.Post(ctx, commit, s); err != nil {
		return err
	}
	k := n.key
	now := n.now()
	lease := now.Add(ShowHold).UnixMilli()
	r, err := n.st.ClaimNote(ctx, k.VcID, k.RepoID, n.number, n.seq, now, lease)
	switch {
	case err != nil:
		return fmt.Errorf("claim the note of merge request %d of project %d: %w", n.number, k.RepoID, err)
	case r == store.Superseded:
		return nil // a newer gate's note is claimed
	case r == store.Busy:
		return fmt.Errorf("note of merge request %d of project %d: %w", n.number, k.RepoID, commitstatus.ErrBusy)
	}
	// A release that fails leaves the hold to run out.
	defer func() { _ = n.st.ReleaseNote(context.WithoutCancel(ctx), k.VcID, k.RepoID, n.number, n.seq, lease) }()
	sh, err := n.st.Note(ctx, k.VcID, k.RepoID, n.number)
	if err != nil {
		return fmt.Errorf("read the note of merge request %d of project %d: %w", n.number, k.RepoID, err)
	}
	if sh.ID != 0 && sh.Seq >= n.seq {
		return nil
	}
	fs, truncated, err := n.findings(ctx)
	if err != nil {
		return err
	}
	id, err := n.gl.SyncNote(ctx, k.RepoID, n.number, sh.ID, commitstatus.NoteOf(n.gate, n.dashboard, fs, truncated))
	if id == 0 || id == sh.ID && err != nil {
		return err
	}
	next := store.Shown{ID: id, Seq: sh.Seq}
	if err == nil {
		next.Seq = n.seq
	}
	if serr := n.st.SetNote(ctx, k.VcID, k.RepoID, n.number, n.seq, lease, next); serr != nil {
		return errors.Join(err, fmt.Errorf("record note %d of merge request %d of project %d: %w", id, n.number, k.RepoID, serr))
	}
	return err
}
