package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// An allowlist whose expiry is still to apply is in the sparse GSI1
// partition EXPIRY, sorted by its expiry; the scheduled function queries
// the part of it that has passed (never a Scan). Applying an expiry is a
// change like a modify: in one transaction the allowlist and its rule are
// marked expired (the allowlist leaving the partition, the group's
// version moved), with the allowlist.expire audit entry and the work that
// re-evaluates the group's findings (kind expiry), which the scheduled
// function then runs or dispatches. A run that finds an allowlist expired
// already (the index lags) does nothing. An allowlist left in the
// partition marked settling (applied before expiries were durable work,
// its re-evaluation unfinished) gets its work then.

// expiryPK is the GSI1 partition of allowlists whose expiry is to apply.
const expiryPK = "EXPIRY"

// aSettling marks an expired allowlist whose findings were still to be
// re-evaluated, before expiries wrote their work.
const aSettling = "settling"

// expirer is who applies expiries, for the audit entries: the system.
func expirer() scangate.Who { return scangate.Who{RequestID: "expire-allowlists"} }

// expirySK orders the allowlists of the EXPIRY partition by expiry.
func expirySK(a scangate.Allowlist) string {
	return a.ExpiresAt.String() + "#" + fmt.Sprintf("%019d", a.ID)
}

// ExpireDue applies the expiry of every allowlist whose expiry has passed
// at now: it stops suppressing, and the work that re-evaluates what it
// covered is written with it, held by the caller until lease. It returns
// that work, one item per expiry applied, for the caller to run.
func (s *Store) ExpireDue(ctx context.Context, now time.Time, lease int64) ([]work.Item, error) {
	due, err := s.queryAll(ctx, "list due expiries", &dynamodb.QueryInput{
		IndexName:              aws.String(GSI1),
		KeyConditionExpression: aws.String(ref(aGSI1PK) + " = :pk AND " + ref(aGSI1SK) + " <= :now"),
		ExpressionAttributeValues: item{":pk": str(expiryPK),
			":now": str(scangate.At(now).String() + "#~")},
	})
	if err != nil {
		return nil, err
	}
	var items []work.Item
	for _, it := range due {
		id, _ := strconv.ParseInt(strings.TrimPrefix(getS(it, aPK), "ALLOW#"), 10, 64)
		w, applied, err := s.expire(ctx, id, now, lease)
		if err != nil {
			return items, err
		}
		if applied {
			items = append(items, w)
		}
	}
	return items, nil
}

// expire applies one allowlist's expiry, and reports whether it did.
func (s *Store) expire(ctx context.Context, id int64, now time.Time, lease int64) (work.Item, bool, error) {
	workID := int64(0)
	var w work.Item
	applied := false
	err := s.retry.Do(ctx, "expire allowlist", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get allowlist", allowKey(id))
		if err != nil || it == nil {
			return true, err
		}
		cur, ver := allowFrom(it)
		settling := getBool(it, aSettling, false)
		if !settling && (cur.ExpiresAt == nil || now.Before(cur.ExpiresAt.Time) || cur.Rule.Expired) {
			return true, nil // extended, removed, or applied already
		}
		if workID == 0 {
			if workID, err = s.nextID(ctx, "work"); err != nil {
				return true, err
			}
		}
		t, p, err := s.expiryTx(ctx, cur, ver, settling, now)
		if err != nil {
			return true, err
		}
		if w, err = putWork(t, workID, KindExpiry, p, now, lease); err != nil {
			return true, err
		}
		err = s.commit(ctx, "expire allowlist", t)
		if lostRace(err, lAllow, lGroup) {
			return false, nil
		}
		applied = err == nil
		return true, err
	})
	return w, applied, err
}

// expiryTx builds the transaction of an expiry (or, for an allowlist
// marked settling, of the work it still owes), and the parameters of its
// re-evaluation: the rule before and after, the group's version after.
func (s *Store) expiryTx(ctx context.Context, cur scangate.Allowlist, ver int64, settling bool, now time.Time) (*tx, reevalParams, error) {
	g := groupOf(cur.Rule.Type, cur.Rule.Name)
	v, err := s.groupVersions(ctx, []groupKey{g})
	if err != nil {
		return nil, reevalParams{}, err
	}
	a, old := cur, cur.Rule
	a.Rule.Expired, old.Expired = true, false
	t := s.newTx()
	t.put(lAllow, allowItem(a, ver+1), when(ref(aVer)+" = :ver", ":ver", num(ver))) // out of the EXPIRY partition
	p := reevalParams{Allowlist: cur.ID, Old: &old, New: a.Rule, Groups: []groupAt{atVersion(g, v[g].gv)}}
	if settling { // applied already: its work alone
		return t, p, nil
	}
	setRule(t, g, v[g], cur.ID, a.Rule, false)
	p.Groups[0].GV++
	s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistExpire, expirer(), allowTarget(cur.ID), allowChanges(cur, a, ""), now))
	s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistExpired, now, scangate.ViewAllowlist(a, now)))
	return t, p, nil
}

// ExpiringNotice is how long before an allowlist's expiry its
// allowlist.expiring event is written.
const ExpiringNotice = 7 * 24 * time.Hour

// WarnExpiring writes allowlist.expiring, once per allowlist and expiry,
// for every allowlist whose expiry falls within ExpiringNotice of now: a
// marker ALLOW#<id>/EXPIRING#<expires_at>, put only if absent, is written
// with the event, so the next runs (every minute), a modify, or a retry
// write none again, and a new expiry gets its own notice. It reports how
// many it wrote.
func (s *Store) WarnExpiring(ctx context.Context, now time.Time) (int, error) {
	soon, err := s.queryAll(ctx, "list coming expiries", &dynamodb.QueryInput{
		IndexName:              aws.String(GSI1),
		KeyConditionExpression: aws.String(ref(aGSI1PK) + " = :pk AND " + ref(aGSI1SK) + " BETWEEN :now AND :soon"),
		ExpressionAttributeValues: item{":pk": str(expiryPK), ":now": str(scangate.At(now).String()),
			":soon": str(scangate.At(now.Add(ExpiringNotice)).String() + "#~")},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range soon {
		id, _ := strconv.ParseInt(strings.TrimPrefix(getS(it, aPK), "ALLOW#"), 10, 64)
		a, _, err := s.allowlist(ctx, id)
		if scangate.KindOf(err) == scangate.KindNotFound {
			continue
		}
		if err != nil {
			return n, err
		}
		if a.ExpiresAt == nil || a.Rule.Expired || !now.Before(a.ExpiresAt.Time) || a.ExpiresAt.Sub(now) > ExpiringNotice {
			continue // the index lagged a change of its expiry
		}
		t := s.newTx()
		marker := key(allowPK(id), "EXPIRING#"+a.ExpiresAt.String())
		marker[aTTL] = num(a.ExpiresAt.Add(DefaultEventRetention).Unix())
		t.put(lAllow, marker, when("attribute_not_exists("+ref(aPK)+")"))
		s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistExpiring, now, scangate.ViewAllowlist(a, now)))
		switch err := s.commitRetried(ctx, "warn expiring allowlist", t); {
		case failed(err, lAllow):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	return n, nil
}
