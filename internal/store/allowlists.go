package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
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

func allowPK(id int64) string { return KeyAllow + strconv.FormatInt(id, 10) }

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
	return KeyAllowName + scangate.FindingKey(scangate.ScanVulnerability, name)
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

// CreateAllowlist stores a new allowlist, its rule in its group (the
// group's version moved), its audit entry and the work that re-evaluates
// the group's findings (held by the caller until lease), in one
// transaction. It returns the allowlist and the work, which the caller
// then runs (work.Runner.Continue).
func (s *Store) CreateAllowlist(ctx context.Context, na scangate.Allowlist, comment string, who scangate.Who, now time.Time, lease int64) (scangate.Allowlist, work.Item, error) {
	by, r := actorID(who), na.Rule
	id, err := s.nextID(ctx, "allowlist")
	if err != nil {
		return scangate.Allowlist{}, work.Item{}, err
	}
	workID, err := s.nextID(ctx, "work")
	if err != nil {
		return scangate.Allowlist{}, work.Item{}, err
	}
	at := scangate.At(now)
	a := scangate.Allowlist{ID: id, Rule: r, Reason: na.Reason, ExpiresAt: na.ExpiresAt, Comments: []int64{},
		CreatedBy: by, UpdatedBy: by, CreatedOn: at, UpdatedOn: at}
	var commentID int64
	if comment != "" {
		if commentID, err = s.nextID(ctx, "comment"); err != nil {
			return scangate.Allowlist{}, work.Item{}, err
		}
		a.Comments = append(a.Comments, commentID)
	}
	g := groupOf(r.Type, r.Name)
	var w work.Item
	err = s.retry.Do(ctx, "create allowlist", func(int) (bool, error) {
		cur, err := s.groupVersions(ctx, []groupKey{g})
		if err != nil {
			return true, err
		}
		t := s.newTx()
		if commentID != 0 {
			t.put(lComment, commentItem(id, commentID, by, comment, now), nil)
		}
		t.put(lAllow, allowItem(a, 1), when("attribute_not_exists("+ref(aPK)+")"))
		setRule(t, g, cur[g], id, r, true)
		s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistCreate, who, allowTarget(id), allowChanges(scangate.Allowlist{}, a, comment), now))
		s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistCreated, now, scangate.ViewAllowlist(a, now)))
		p := reevalParams{Allowlist: id, New: r, Groups: []groupAt{atVersion(g, cur[g].gv+1)}}
		if w, err = putWork(t, workID, KindAllowlist, p, now, lease); err != nil {
			return true, err
		}
		err = s.commit(ctx, "create allowlist", t)
		if lostRace(err, lGroup) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return scangate.Allowlist{}, work.Item{}, err
	}
	return a, w, nil
}

// UpdateAllowlist applies a partial change to an allowlist, moves its rule
// between groups when its type or name changes, appends the comment, and
// writes the work that re-evaluates the findings of the old and the new
// group (held by the caller until lease), in one transaction. A change
// that leaves the rule as it is still writes its work (re-evaluating by
// the group's current version): sent again after a failure, it completes
// what the first left, as the durable work does anyway.
func (s *Store) UpdateAllowlist(ctx context.Context, id int64, c scangate.AllowlistChange, who scangate.Who, now time.Time, lease int64) (scangate.Allowlist, work.Item, error) {
	by := actorID(who)
	workID, err := s.nextID(ctx, "work")
	if err != nil {
		return scangate.Allowlist{}, work.Item{}, err
	}
	var a scangate.Allowlist
	var w work.Item
	var commentID int64
	err = s.retry.Do(ctx, "update allowlist", func(int) (bool, error) {
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
		a = c.ApplyTo(cur)
		a.UpdatedBy, a.UpdatedOn = by, scangate.At(now)
		if commentID != 0 {
			a.Comments = append(a.Comments, commentID)
		}
		t, p, err := s.allowlistUpdateTx(ctx, a, cur.Rule, ver, commentID, c.Comment, now)
		if err != nil {
			return true, err
		}
		s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistUpdate, who, allowTarget(id), allowChanges(cur, a, c.Comment), now))
		s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistUpdated, now, scangate.ViewAllowlist(a, now)))
		if w, err = putWork(t, workID, KindAllowlist, p, now, lease); err != nil {
			return true, err
		}
		err = s.commit(ctx, "update allowlist", t)
		if lostRace(err, lAllow, lGroup, lOldGroup) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return scangate.Allowlist{}, work.Item{}, err
	}
	return a, w, nil
}

// allowlistUpdateTx writes a changed allowlist over version ver, with its
// comment, and moves its rule within or between groups when it changed
// (reading their versions). It returns the transaction and the
// parameters of the re-evaluation: the rules, and the version of each
// group after the change.
func (s *Store) allowlistUpdateTx(ctx context.Context, a scangate.Allowlist, old scangate.Rule, ver, commentID int64, comment string, now time.Time) (*tx, reevalParams, error) {
	og, ng := groupOf(old.Type, old.Name), groupOf(a.Rule.Type, a.Rule.Name)
	cur, err := s.groupVersions(ctx, []groupKey{ng, og})
	if err != nil {
		return nil, reevalParams{}, err
	}
	t := s.newTx()
	t.put(lAllow, allowItem(a, ver+1), when(ref(aVer)+" = :ver", ":ver", num(ver)))
	if commentID != 0 {
		t.put(lComment, commentItem(a.ID, commentID, a.UpdatedBy, comment, now), nil)
	}
	p := reevalParams{Allowlist: a.ID, Old: &old, New: a.Rule}
	if a.Rule.Equal(old) { // reason, expiry: the allowlist item alone
		p.Groups = []groupAt{atVersion(ng, cur[ng].gv)}
		return t, p, nil
	}
	p.Groups = []groupAt{atVersion(ng, cur[ng].gv+1)}
	if og != ng {
		dropRule(t, og, cur[og], a.ID)
		p.Groups = append(p.Groups, atVersion(og, cur[og].gv+1))
	}
	setRule(t, ng, cur[ng], a.ID, a.Rule, og != ng)
	return t, p, nil
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
	if !slices.Equal(o.Fingerprints, r.Fingerprints) {
		c["fingerprints"] = scangate.Change{From: orEmpty(o.Fingerprints), To: orEmpty(r.Fingerprints)}
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
