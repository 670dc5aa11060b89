package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/pkg/scangate"
)

// An allowlist whose expiry is still to apply is in the sparse GSI1
// partition EXPIRY, sorted by its expiry; the scheduled function queries
// the part of it that has passed (never a Scan). Applying an expiry is a
// change like a modify: in one transaction the allowlist and its rule are
// marked expired (with the group's version moved and the allowlist.expire
// audit entry), and the allowlist stays in the partition, marked settling;
// then its group is re-evaluated; then it leaves the partition. A run that
// stops midway leaves it there, marked settling, for the next run to
// finish; a run that finds it already expired and settled (the index
// lags) does nothing.

// expiryPK is the GSI1 partition of allowlists whose expiry is to apply.
const expiryPK = "EXPIRY"

// aSettling marks an expired allowlist whose findings are still to be
// re-evaluated.
const aSettling = "settling"

// expirer is who applies expiries, for the audit entries: the system.
func expirer() scangate.Who { return scangate.Who{RequestID: "expire-allowlists"} }

// expirySK orders the allowlists of the EXPIRY partition by expiry.
func expirySK(a scangate.Allowlist) string {
	return a.ExpiresAt.String() + "#" + fmt.Sprintf("%019d", a.ID)
}

// ExpireDue applies the expiry of every allowlist whose expiry has passed
// at now: it stops suppressing, and what it covered is re-evaluated as a
// modify would. It reports how many it applied.
func (s *Store) ExpireDue(ctx context.Context, now time.Time) (int, error) {
	due, err := s.queryAll(ctx, "list due expiries", &dynamodb.QueryInput{
		IndexName:              aws.String(GSI1),
		KeyConditionExpression: aws.String(ref(aGSI1PK) + " = :pk AND " + ref(aGSI1SK) + " <= :now"),
		ExpressionAttributeValues: item{":pk": str(expiryPK),
			":now": str(scangate.At(now).String() + "#~")},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range due {
		id, _ := strconv.ParseInt(strings.TrimPrefix(getS(it, aPK), "ALLOW#"), 10, 64)
		applied, err := s.expire(ctx, id, now)
		if err != nil {
			return n, err
		}
		if applied {
			n++
		}
	}
	return n, nil
}

// expire applies one allowlist's expiry, or finishes applying it, and
// reports whether this call applied it.
func (s *Store) expire(ctx context.Context, id int64, now time.Time) (bool, error) {
	var cur, a scangate.Allowlist
	var ver int64
	applied, settling := false, false
	err := s.retry.Do(ctx, "expire allowlist", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get allowlist", allowKey(id))
		if err != nil || it == nil {
			return true, err
		}
		cur, ver = allowFrom(it)
		settling = getBool(it, aSettling, false)
		if cur.ExpiresAt == nil || now.Before(cur.ExpiresAt.Time) || cur.Rule.Expired {
			return true, nil // extended, removed, or applied already
		}
		a = cur
		a.Rule.Expired = true
		t := s.newTx()
		it = allowItem(a, ver+1)
		it[aSettling] = boolean(true)
		it[aGSI1PK], it[aGSI1SK] = str(expiryPK), str(expirySK(cur))
		t.put(lAllow, it, when(ref(aVer)+" = :ver", ":ver", num(ver)))
		setRule(t, groupOf(a.Rule.Type, a.Rule.Name), id, a.Rule, false)
		s.addAudit(t, scangate.NewAudit(scangate.AuditAllowlistExpire, expirer(), allowTarget(id), allowChanges(cur, a, ""), now))
		s.addEvent(t, scangate.NewEvent(scangate.EventAllowlistExpired, now, scangate.ViewAllowlist(a, now)))
		err = s.commit(ctx, "expire allowlist", t)
		if lostRace(err, lAllow) {
			return false, nil
		}
		applied, settling, ver = err == nil, err == nil, ver+1
		return true, err
	})
	if err != nil || !settling {
		return applied, err
	}
	old := cur.Rule
	old.Expired = false
	if !applied { // a run before this one stopped midway: finish it
		old, a = cur.Rule, cur
		old.Expired = false
	}
	if _, err := s.settle(ctx, old, a.Rule, scangate.CauseExpiry, now); err != nil {
		return applied, err
	}
	// Settled: leave the partition of expiries to apply. A change made
	// meanwhile wrote the allowlist as it is, so nothing is left to do.
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: allowItem(a, ver+1),
		ConditionExpression: aws.String(ref(aVer) + " = :ver"), ExpressionAttributeNames: map[string]string{ref(aVer): aVer},
		ExpressionAttributeValues: item{":ver": num(ver)}})
	if err != nil && !conditionFailed(err) {
		return applied, dbErr("settle expired allowlist", err)
	}
	return applied, nil
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
