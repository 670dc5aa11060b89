package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/scangate/scangate/pkg/scangate"
)

// MaxComments bounds the comments of one allowlist, so that its item (which
// lists their ids) stays small: a change that would add one more is a
// conflict.
const MaxComments = 100

// Labels of allowlist transactions (group items: groups.go).
const (
	lAllow   = "allowlist"
	lComment = "comment"
)

func allowPK(id int64) string { return "ALLOW#" + strconv.FormatInt(id, 10) }

func allowKey(id int64) item { return key(allowPK(id), "ALLOW") }

func allowItem(a scangate.Allowlist, ver int64) item {
	it := allowKey(a.ID)
	for k, v := range ruleAttrs(a.Rule) {
		it[k] = v
	}
	it[aID] = num(a.ID)
	setIDs(it, aComments, a.Comments)
	it[aCreatedBy] = num(a.CreatedBy)
	it[aUpdBy] = num(a.UpdatedBy)
	it[aCreatedOn] = str(a.CreatedOn.String())
	it[aUpdatedOn] = str(a.UpdatedOn.String())
	it[aVer] = num(ver)
	if a.Reason != "" {
		it[aReason] = str(a.Reason)
	}
	if a.ExpiresAt != nil {
		it[aExpiresAt] = str(a.ExpiresAt.String())
		if !a.Rule.Expired { // an expiry still to apply: the sparse index of the scheduled function
			it[aGSI1PK], it[aGSI1SK] = str(expiryPK), str(expirySK(a))
		}
	}
	// Listings: all allowlists by id; by name ignoring case (secrets' names,
	// which compare exactly, are filtered once read).
	it[aGSI2PK], it[aGSI2SK] = str(allAllowlistsPK), str(fmt.Sprintf("%019d", a.ID))
	it[aGSI3PK], it[aGSI3SK] = str(allowNamePK(a.Rule.Name)), str(fmt.Sprintf("%019d", a.ID))
	return it
}

// allowNamePK is the GSI3 partition of the allowlists of a name, whatever
// its case.
func allowNamePK(name string) string {
	return "ALLOWNAME#" + scangate.FindingKey(scangate.ScanVulnerability, name)
}

func allowFrom(it item) (scangate.Allowlist, int64) {
	a := scangate.Allowlist{
		ID: getN(it, aID), Rule: ruleFrom(it), Reason: getS(it, aReason), Comments: getIDs(it, aComments),
		CreatedBy: getN(it, aCreatedBy), UpdatedBy: getN(it, aUpdBy),
		CreatedOn: getTime(it, aCreatedOn), UpdatedOn: getTime(it, aUpdatedOn),
	}
	if s := getS(it, aExpiresAt); s != "" {
		t := getTime(it, aExpiresAt)
		a.ExpiresAt = &t
	}
	return a, getN(it, aVer)
}

func commentItem(allowID, commentID, by int64, text string, at time.Time) item {
	it := key(allowPK(allowID), fmt.Sprintf("COMMENT#%019d", commentID))
	it[aID] = num(commentID)
	it[aText] = str(text)
	it[aCommentBy] = num(by)
	it[aCommentAt] = str(scangate.At(at).String())
	return it
}

// CreateAllowlist stores a new allowlist and its rule in its group, and
// re-evaluates the group's findings before it returns.
func (s *Store) CreateAllowlist(ctx context.Context, na scangate.Allowlist, comment string, who scangate.Who, now time.Time) (scangate.Allowlist, scangate.Updated, error) {
	by, r := actorID(who), na.Rule
	id, err := s.nextID(ctx, "allowlist")
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	at := scangate.At(now)
	a := scangate.Allowlist{ID: id, Rule: r, Reason: na.Reason, ExpiresAt: na.ExpiresAt, Comments: []int64{},
		CreatedBy: by, UpdatedBy: by, CreatedOn: at, UpdatedOn: at}
	t := s.newTx()
	if comment != "" {
		commentID, err := s.nextID(ctx, "comment")
		if err != nil {
			return scangate.Allowlist{}, scangate.Updated{}, err
		}
		a.Comments = append(a.Comments, commentID)
		t.put(lComment, commentItem(id, commentID, by, comment, now), nil)
	}
	t.put(lAllow, allowItem(a, 1), when("attribute_not_exists("+ref(aPK)+")"))
	setRule(t, groupOf(r.Type, r.Name), id, r, true)
	s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistCreate, who, allowTarget(id), allowChanges(scangate.Allowlist{}, a, comment), now))
	s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistCreated, now, scangate.ViewAllowlist(a, now)))
	err = s.retry.Do(ctx, "create allowlist", func(int) (bool, error) {
		err := s.commit(ctx, "create allowlist", t)
		if lostRace(err) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	upd, err := s.settle(ctx, scangate.Rule{}, r, scangate.CauseAllowlist, now)
	return a, upd, err
}

// UpdateAllowlist applies a partial change to an allowlist, moves its rule
// between groups when its type or name changes, appends the comment, and
// re-evaluates the findings of the old and the new group before it returns.
// Sent again after a failure, the same change completes the re-evaluation.
func (s *Store) UpdateAllowlist(ctx context.Context, id int64, c scangate.AllowlistChange, who scangate.Who, now time.Time) (scangate.Allowlist, scangate.Updated, error) {
	by := actorID(who)
	var a scangate.Allowlist
	var oldRule scangate.Rule
	var commentID int64
	err := s.retry.Do(ctx, "update allowlist", func(int) (bool, error) {
		cur, ver, err := s.allowlist(ctx, id)
		if err != nil {
			return true, err
		}
		if c.Comment != "" && len(cur.Comments) >= MaxComments {
			return true, scangate.Errorf(scangate.KindConflict, "allowlist %d has %d comments, the most it may hold", id, MaxComments)
		}
		if c.Comment != "" && commentID == 0 {
			if commentID, err = s.nextID(ctx, "comment"); err != nil {
				return true, err
			}
		}
		oldRule, a = cur.Rule, c.ApplyTo(cur)
		a.UpdatedBy, a.UpdatedOn = by, scangate.At(now)
		if commentID != 0 {
			a.Comments = append(a.Comments, commentID)
		}
		t := s.allowlistUpdateTx(a, oldRule, ver, commentID, c.Comment, now)
		s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistUpdate, who, allowTarget(id), allowChanges(cur, a, c.Comment), now))
		s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistUpdated, now, scangate.ViewAllowlist(a, now)))
		err = s.commit(ctx, "update allowlist", t)
		if lostRace(err, lAllow) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return scangate.Allowlist{}, scangate.Updated{}, err
	}
	upd, err := s.settle(ctx, oldRule, a.Rule, scangate.CauseAllowlist, now)
	return a, upd, err
}

// allowlistUpdateTx writes a changed allowlist over version ver, with its
// comment, and moves its rule within or between groups when it changed.
func (s *Store) allowlistUpdateTx(a scangate.Allowlist, old scangate.Rule, ver, commentID int64, comment string, now time.Time) *tx {
	t := s.newTx()
	t.put(lAllow, allowItem(a, ver+1), when(ref(aVer)+" = :ver", ":ver", num(ver)))
	if commentID != 0 {
		t.put(lComment, commentItem(a.ID, commentID, a.UpdatedBy, comment, now), nil)
	}
	if a.Rule.Equal(old) {
		return t // reason, expiry: the allowlist item alone
	}
	og, ng := groupOf(old.Type, old.Name), groupOf(a.Rule.Type, a.Rule.Name)
	if og != ng {
		dropRule(t, og, a.ID)
	}
	setRule(t, ng, a.ID, a.Rule, og != ng)
	return t
}

func allowTarget(id int64) scangate.Target {
	return scangate.Target{Type: "allowlist", ID: strconv.FormatInt(id, 10)}
}

// actorID is the user id of who makes a change, 0 for the system.
func actorID(who scangate.Who) int64 {
	if who.Actor == nil {
		return 0
	}
	return who.Actor.UserID
}

// allowChanges are the audited fields of an allowlist that changed from
// old to a (old with no type: created), with the comment added.
func allowChanges(old, a scangate.Allowlist, comment string) scangate.Changes {
	c := scangate.Changes{}
	created := old.Rule.Type == ""
	from := func(v any) any {
		if created {
			return nil
		}
		return v
	}
	r, o := a.Rule, old.Rule
	c.Set("type", from(string(o.Type)), string(r.Type))
	c.Set("name", from(o.Name), r.Name)
	c.Set("active", from(o.Active), r.Active)
	c.Set("global_", from(o.Global), r.Global)
	c.IDs("repos", o.Repos, r.Repos)
	c.IDs("vcs", o.Vcs, r.Vcs)
	if !slices.Equal(o.Paths, r.Paths) {
		c["paths"] = scangate.Change{From: orEmpty(o.Paths), To: orEmpty(r.Paths)}
	}
	c.Set("reason", nullable(old.Reason), nullable(a.Reason))
	c.Set("expires_at", timeOrNil(old.ExpiresAt), timeOrNil(a.ExpiresAt))
	c.Set("expired", o.Expired, r.Expired)
	if comment != "" {
		c.Set("comment", nil, comment)
	}
	return c
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeOrNil(t *scangate.Time) any {
	if t == nil {
		return nil
	}
	return t.String()
}

// allowlist reads an allowlist and its version, strongly consistent.
func (s *Store) allowlist(ctx context.Context, id int64) (scangate.Allowlist, int64, error) {
	it, err := s.getItem(ctx, "get allowlist", allowKey(id))
	if err != nil {
		return scangate.Allowlist{}, 0, err
	}
	if it == nil {
		return scangate.Allowlist{}, 0, scangate.Errorf(scangate.KindNotFound, "no allowlist has the id %d", id)
	}
	a, ver := allowFrom(it)
	return a, ver, nil
}
