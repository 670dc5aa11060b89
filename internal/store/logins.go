package store

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// Login attempts of a username are reserved in places s0..s4 of its
// LOGINFAIL item (epoch ms of the reservation, 0 when given back; f<k>
// marks a place whose attempt failed). A place is free when absent, 0 or
// older than the window. (Places are zeroed rather than removed: the
// embedded test server ignores REMOVE of a top-level attribute.)
// Reserving is a conditional write on the place as it was read, so under
// any concurrency at most MaxLoginAttempts reservations live in a window,
// and so at most that many passwords are verified.

func loginFailKey(username string) item {
	return key("LOGINFAIL#"+scangate.FoldUsername(username), "LOGINFAIL")
}

func slotAttr(i int) string   { return "s" + strconv.Itoa(i) }
func failedAttr(i int) string { return "f" + strconv.Itoa(i) }

// loginState is what a login reads in one round trip: the username's
// marker (its user, password hash and active flag) and its places.
type loginState struct {
	userID int64
	hash   string
	active bool
	slots  [scangate.MaxLoginAttempts]int64 // epoch ms; 0 when empty
	failed [scangate.MaxLoginAttempts]bool
}

func (s *Store) readLogin(ctx context.Context, username string) (loginState, error) {
	items, err := s.batchGet(ctx, "look up login", []item{usernameKey(username), loginFailKey(username)})
	if err != nil {
		return loginState{}, err
	}
	var st loginState
	for _, it := range items {
		switch getS(it, aSK) {
		case "USERNAME":
			st.userID, st.hash, st.active = getN(it, aUserID), getS(it, aPwHash), getBool(it, aActive, true)
		case "LOGINFAIL":
			places := slotsOf(it)
			st.slots, st.failed = places.slots, places.failed
		}
	}
	return st, nil
}

// pendingFor is how long a reservation whose login has not ended yet is
// expected to be given back or kept; one older than that belongs to a
// login that never ended, and counts as a failure.
const pendingFor = 30 * time.Second

// free returns the free places at now and, when there is none, how long
// until one frees: a second when a login still in progress holds one (it
// gives it back if it succeeds), else until the oldest failure leaves the
// window.
func (st loginState) free(now time.Time) ([]int, time.Duration) {
	cutoff := now.Add(-scangate.LoginWindow).UnixMilli()
	var free []int
	oldest, pending := int64(0), false
	for i, ms := range st.slots {
		switch {
		case ms <= cutoff:
			free = append(free, i)
		case !st.failed[i] && now.Sub(time.UnixMilli(ms)) < pendingFor:
			pending = true
		case oldest == 0 || ms < oldest:
			oldest = ms
		}
	}
	if pending {
		return free, time.Second
	}
	return free, time.UnixMilli(oldest).Add(scangate.LoginWindow).Sub(now)
}

// ReserveLogin reserves an attempt to log in as username, or answers
// KindTooMany with Retry-After when every place is taken. Two round trips
// unless concurrent logins race for the same place.
func (s *Store) ReserveLogin(ctx context.Context, username string, now time.Time) (scangate.LoginAttempt, error) {
	var a scangate.LoginAttempt
	err := s.retry.Do(ctx, "reserve login", func(int) (bool, error) {
		st, err := s.readLogin(ctx, username)
		if err != nil {
			return true, err
		}
		free, wait := st.free(now)
		if len(free) == 0 {
			return true, &scangate.Error{Kind: scangate.KindTooMany, RetryAfter: wait,
				Detail: "too many logins for this username failed recently or are in progress; wait before trying again"}
		}
		slot := free[rand.IntN(len(free))]
		after, ok, err := s.takeSlot(ctx, username, slot, st.slots[slot], now)
		switch {
		case err != nil:
			return true, err
		case !ok: // another login took the place first: read again
			return false, nil
		}
		left, _ := after.free(now)
		a = scangate.LoginAttempt{UserID: st.userID, PasswordHash: st.hash, Active: st.active,
			Slot: slot, At: now, Last: len(left) == 0}
		return true, nil
	})
	return a, err
}

// takeSlot writes a reservation into a place that still holds old, and
// returns the places as the write left them: writes to the item take
// turns, so exactly one reservation sees the last free place go.
func (s *Store) takeSlot(ctx context.Context, username string, slot int, old int64, now time.Time) (loginState, bool, error) {
	sa := slotAttr(slot)
	in := &dynamodb.UpdateItemInput{
		Key:              loginFailKey(username),
		UpdateExpression: aws.String("SET " + sa + " = :now, " + failedAttr(slot) + " = :f, " + ref(aTTL) + " = :ttl"),
		ExpressionAttributeValues: item{":now": num(now.UnixMilli()), ":f": boolean(false), ":old": num(old),
			":ttl": num(now.Add(scangate.LoginWindow + expiredItemGrace).Unix())},
		ConditionExpression: aws.String(sa + " = :old"),
		ReturnValues:        types.ReturnValueAllNew,
	}
	if old == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(" + sa + ") OR " + sa + " = :old")
	}
	out, err := s.updateItem(ctx, in)
	switch {
	case err == nil:
		return slotsOf(out.Attributes), true, nil
	case conditionFailed(err):
		return loginState{}, false, nil
	}
	return loginState{}, false, dbErr("reserve login", err)
}

// slotsOf reads the places of a LOGINFAIL item.
func slotsOf(it item) loginState {
	var st loginState
	for i := range st.slots {
		st.slots[i], st.failed[i] = getN(it, slotAttr(i)), getBool(it, failedAttr(i), false)
	}
	return st
}

// LoginSucceeded stores the token of a successful login (with its audit
// entry) and gives the attempt's reservation back, in one transaction.
// The transaction is built once and sent again as it is after a
// conflict (the same items, the same audit entry), as LoginFailed does.
func (s *Store) LoginSucceeded(ctx context.Context, username string, a scangate.LoginAttempt, tok scangate.Token, who scangate.Who) error {
	build := func(release bool) *tx {
		t := s.newTx()
		s.putToken(t, tok, who)
		if release {
			sa := slotAttr(a.Slot)
			t.update(lSlot, loginFailKey(username), "SET "+sa+" = :zero, "+failedAttr(a.Slot)+" = :f",
				item{":zero": num(0), ":f": boolean(false)}, when(sa+" = :at", ":at", num(a.At.UnixMilli())))
		}
		return t
	}
	t := build(true)
	return s.retry.Do(ctx, "log in", func(int) (bool, error) {
		err := s.commit(ctx, "log in", t)
		switch {
		case failed(err, lSlot):
			// The place no longer holds this reservation (it left the
			// window and was taken again): store the token alone.
			t = build(false)
			return false, nil
		case lostRace(err):
			return false, nil
		}
		return true, err
	})
}

// LoginFailed marks the attempt's place as a failure, with the audit entry
// of the failure (and of the lockout, when the attempt took the last
// place); the reservation stays and counts until it leaves the window.
func (s *Store) LoginFailed(ctx context.Context, username string, a scangate.LoginAttempt, who scangate.Who) error {
	t := s.newTx()
	t.update(lSlot, loginFailKey(username), "SET "+failedAttr(a.Slot)+" = :t", item{":t": boolean(true)},
		when(slotAttr(a.Slot)+" = :at", ":at", num(a.At.UnixMilli())))
	target := scangate.Target{Type: "username", ID: scangate.FoldUsername(username)}
	s.addAudit(t, scangate.NewAudit(scangate.AuditLoginFailure, who, target, nil, a.At))
	if a.Last {
		s.addAudit(t, scangate.NewAudit(scangate.AuditLoginThrottled, who, target, nil, a.At))
	}
	return s.retry.Do(ctx, "record failed login", func(int) (bool, error) {
		err := s.commit(ctx, "record failed login", t)
		switch {
		case failed(err, lSlot):
			return true, nil // the place was taken again after the window: nothing to mark
		case lostRace(err): // concurrent failures of the same username: one item
			return false, nil
		}
		return true, err
	})
}
