package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// Audit entries are written in the transaction of the change they tell
// of, under a ULID (time-ordered, unique without a shared counter):
//
//	AUDIT / <ulid>        a change (users, allowlists, tokens, bootstrap)
//	AUDITLOGIN / <ulid>   a failed or throttled login
//	GSI1 (keys): AUDITTARGET#<type>#<id> / <ulid>   by target
//	GSI3:        AUDITACTOR#<user id> / <ulid>      by actor
//
// Failed logins, which anyone can cause, have a partition of their own, so
// that they can never throttle the writes of changes. The log reads newest
// first. Entries expire through the table's TTL after the retention.

// DefaultAuditRetention is how long entries are kept unless configured
// (config.DefaultAuditRetention, which functions read from their
// environment).
const DefaultAuditRetention = 400 * 24 * time.Hour

// Audit partitions.
const (
	auditPK      = "AUDIT"
	auditLoginPK = "AUDITLOGIN"
)

// lAudit labels the audit entry of a transaction.
const lAudit = "audit"

func auditPartition(action string) string {
	if scangate.LoginAction(action) {
		return auditLoginPK
	}
	return auditPK
}

// newULID makes the id of an audit entry or an event: the time to the
// millisecond, then 80 random bits.
func newULID(at time.Time) string {
	var entropy [10]byte
	_, _ = rand.Read(entropy[:]) // crypto/rand.Read never fails
	return ulidString(at, entropy)
}

// ulidString is a ULID (github.com/ulid/spec): the time in Unix
// milliseconds (48 bits), then the entropy (80 bits), in 26 characters of
// Crockford's base32, so that ids sort as their times. It is written here
// rather than taken from github.com/oklog/ulid, whose package
// initialisation seeds a math/rand source at every start of every
// function (docs/DECISIONS.md).
func ulidString(at time.Time, entropy [10]byte) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	hi := uint64(at.UnixMilli())<<16 | uint64(entropy[0])<<8 | uint64(entropy[1]) // the 128 bits: hi, then lo
	lo := binary.BigEndian.Uint64(entropy[2:])
	var out [26]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo, hi = lo>>5|hi<<59, hi>>5
	}
	return string(out[:])
}

// Attributes of audit entries (the rest are shared: aTTL, aCreatedAt...).
const (
	aAction     = "action"
	aActorID    = "actor_id"
	aActorName  = "actor_name"
	aActorToken = "actor_token"
	aTargetType = "target_type"
	aTargetID   = "target_id"
	aChanges    = "changes"
	aRequestID  = "request_id"
	aSourceIP   = "source_ip"
)

func (s *Store) auditItem(e scangate.AuditEntry) item {
	it := key(auditPartition(e.Action), e.ID)
	it[aCreatedAt] = str(e.At.String())
	it[aAction] = str(e.Action)
	if a := e.Who.Actor; a != nil {
		it[aActorID], it[aActorName], it[aActorToken] = num(a.UserID), str(a.Username), num(a.TokenID)
		it[aGSI3PK], it[aGSI3SK] = str("AUDITACTOR#"+strconv.FormatInt(a.UserID, 10)), str(e.ID)
	}
	it[aTargetType], it[aTargetID] = str(e.Target.Type), str(e.Target.ID)
	it[aGSI1PK], it[aGSI1SK] = str("AUDITTARGET#"+e.Target.Type+"#"+e.Target.ID), str(e.ID)
	if len(e.Changes) > 0 {
		b, _ := json.Marshal(e.Changes) // plain values only
		it[aChanges] = str(string(b))
	}
	if e.Who.RequestID != "" {
		it[aRequestID] = str(e.Who.RequestID)
	}
	if e.Who.SourceIP != "" {
		it[aSourceIP] = str(e.Who.SourceIP)
	}
	it[aTTL] = num(e.At.Add(s.auditRetention).Unix())
	return it
}

func auditFrom(it item) scangate.AuditEntry {
	e := scangate.AuditEntry{
		ID: getS(it, aSK), At: getTime(it, aCreatedAt), Action: getS(it, aAction),
		Who:    scangate.Who{RequestID: getS(it, aRequestID), SourceIP: getS(it, aSourceIP)},
		Target: scangate.Target{Type: getS(it, aTargetType), ID: getS(it, aTargetID)},
	}
	if _, ok := it[aActorID].(*types.AttributeValueMemberN); ok {
		e.Who.Actor = &scangate.Actor{UserID: getN(it, aActorID), Username: getS(it, aActorName), TokenID: getN(it, aActorToken)}
	}
	if c := getS(it, aChanges); c != "" {
		_ = json.Unmarshal([]byte(c), &e.Changes) // written by auditItem
	}
	return e
}

// addAudit adds an entry to a transaction, under a fresh id; an id taken
// already (one chance in 2^80 a millisecond) fails the transaction.
func (s *Store) addAudit(t *tx, e scangate.AuditEntry) scangate.AuditEntry {
	e.ID = newULID(e.At.Time)
	t.put(lAudit, s.auditItem(e), when("attribute_not_exists("+ref(aPK)+")"))
	return e
}

// AuditPage reads one page of the audit log, newest first. Without a
// filter that picks a partition (an action, a target, an actor) it reads
// both, changes and logins together (mergedAuditPage). Target and actor
// filters read their index; an action reads its partition; the other
// filters are applied to what is read (listPage).
func (s *Store) AuditPage(ctx context.Context, f scangate.AuditFilter, limit int, after map[string]string) (scangate.Page[scangate.AuditEntry], error) {
	if f.Action == "" && f.TargetType == "" && f.ActorID == 0 {
		return s.mergedAuditPage(ctx, f, limit, after)
	}
	q := pageQuery{pk: aPK, sk: aSK, value: auditPartition(f.Action), newest: true, strong: true}
	switch {
	case f.TargetType != "":
		q = pageQuery{index: GSI1, pk: aGSI1PK, sk: aGSI1SK, value: "AUDITTARGET#" + f.TargetType + "#" + f.TargetID, newest: true}
	case f.ActorID != 0:
		q = pageQuery{index: GSI3, pk: aGSI3PK, sk: aGSI3SK, value: "AUDITACTOR#" + strconv.FormatInt(f.ActorID, 10), newest: true}
	}
	q.from, q.to = auditRange(f.Since, f.Until)
	var keep filters
	if f.Action != "" {
		keep = append(keep, stringIs(aAction, f.Action))
	}
	if f.ActorID != 0 {
		keep = append(keep, func(it item) bool { return getN(it, aActorID) == f.ActorID })
	}
	var p Page
	var err error
	if q.index == GSI1 { // keys only: the entries are read, then filtered
		p, err = s.queryPage(ctx, "list audit entries", q, limit, after)
		if err == nil {
			p.Items, err = s.readKeys(ctx, "get audit entries", p.Items)
		}
		if err == nil && len(keep) > 0 {
			p.Items = slices.DeleteFunc(p.Items, func(it item) bool { return !keep.keep()(it) })
		}
	} else {
		p, err = s.listPage(ctx, "list audit entries", q, keep.keep(), limit, after)
	}
	if err != nil {
		return scangate.Page[scangate.AuditEntry]{}, err
	}
	return pageOf(q, p, auditFrom), nil
}

// mergedAuditPage reads a page of the whole log, change and login entries
// together, newest first: one Query of each partition (limit entries at
// most from each, in the since/until range), merged by id (ULIDs order
// entries across both). Its page key holds a position in each partition
// that has more: the id of the last entry the page took from it, or "" when
// it took none and the partition is read from its start; a partition
// without a position has no more. Two round trips a page at most.
func (s *Store) mergedAuditPage(ctx context.Context, f scangate.AuditFilter, limit int, after map[string]string) (scangate.Page[scangate.AuditEntry], error) {
	positions := map[string]string{auditPK: "", auditLoginPK: ""}
	if after != nil {
		positions = after
	}
	if len(positions) == 0 {
		return scangate.Page[scangate.AuditEntry]{}, errBadCursor()
	}
	for pk := range positions {
		if pk != auditPK && pk != auditLoginPK {
			return scangate.Page[scangate.AuditEntry]{}, errBadCursor()
		}
	}
	from, to := auditRange(f.Since, f.Until)
	var read []item           // what the queries read, of both partitions
	more := map[string]bool{} // the partitions with entries after what was read
	for _, pk := range []string{auditPK, auditLoginPK} {
		pos, ok := positions[pk]
		if !ok {
			continue
		}
		var start map[string]string
		if pos != "" {
			start = map[string]string{aPK: pk, aSK: pos}
		}
		q := pageQuery{pk: aPK, sk: aSK, value: pk, from: from, to: to, newest: true, strong: true}
		p, err := s.queryPage(ctx, "list audit entries", q, limit, start)
		if err != nil {
			return scangate.Page[scangate.AuditEntry]{}, err
		}
		read = append(read, p.Items...)
		more[pk] = p.Next != nil
	}
	slices.SortFunc(read, func(a, b item) int { return strings.Compare(getS(b, aSK), getS(a, aSK)) })
	n := min(limit, len(read))
	out := scangate.Page[scangate.AuditEntry]{Next: mergedNext(positions, read, more, n)}
	for i, it := range read[:n] {
		out.Items = append(out.Items, auditFrom(it))
		out.After = append(out.After, mergedNext(positions, read, more, i+1))
	}
	return out, nil
}

// mergedNext is where the merged log goes on after the first n entries of
// read (the entries of both partitions read, newest first): for each
// partition that has more, the id of the last of those n taken from it,
// or its position as it was when none was; nil when neither has more.
func mergedNext(positions map[string]string, read []item, more map[string]bool, n int) map[string]string {
	next := map[string]string{}
	for pk, pos := range positions {
		left := more[pk]
		for _, it := range read[n:] {
			left = left || getS(it, aPK) == pk
		}
		for _, it := range read[:n] {
			if getS(it, aPK) == pk {
				pos = getS(it, aSK)
			}
		}
		if left {
			next[pk] = pos
		}
	}
	if len(next) == 0 {
		return nil
	}
	return next
}

// readKeys reads the items of index entries (keys only), in their order.
func (s *Store) readKeys(ctx context.Context, op string, entries []item) ([]item, error) {
	keys := make([]item, len(entries))
	for i, it := range entries {
		keys[i] = keyOf(it)
	}
	items, err := s.batchGetAll(ctx, op, keys)
	if err != nil {
		return nil, err
	}
	return inOrder(items, keys), nil
}

// auditRange turns a time range into a range of entry ids.
func auditRange(since, until time.Time) (string, string) {
	from, to := "", ""
	if !since.IsZero() || !until.IsZero() {
		from, to = "0", "~"
	}
	if !since.IsZero() {
		from = ulidString(since, [10]byte{})
	}
	if !until.IsZero() {
		to = ulidString(until.Add(-time.Millisecond), [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	}
	return from, to
}

// inOrder orders items as their keys.
func inOrder(items []item, keys []item) []item {
	at := map[string]item{}
	for _, it := range items {
		at[keyString(keyOf(it))] = it
	}
	out := make([]item, 0, len(items))
	for _, k := range keys {
		if it, ok := at[keyString(k)]; ok {
			out = append(out, it)
		}
	}
	return out
}
