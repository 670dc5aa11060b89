package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// Item keys of users and their uniqueness markers.
func userKey(id int64) item { return key("USER#"+strconv.FormatInt(id, 10), "USER") }
func usernameKey(username string) item {
	return key("USERNAME#"+scangate.FoldUsername(username), "USERNAME")
}

// emailKey is the marker of an address by its folded form (internal/emailfold, which
// the store does not link: the caller folds).
func emailKey(folded string) item { return key("EMAIL#"+folded, "EMAIL") }

// emailKeyOf is a user's folded address; records from before the address
// was stored folded were marked lower-cased.
func emailKeyOf(u scangate.User) string {
	if u.EmailKey != "" {
		return u.EmailKey
	}
	return strings.ToLower(u.Email)
}

// adminsKey is the item counting active admins, so that the last one cannot
// be demoted or deactivated even by concurrent updates.
var adminsKey = key("COUNTER#active-admins", "COUNTER")

// Labels of the items of user transactions.
const (
	lUser     = "user"
	lUsername = "username"
	lEmail    = "email"
	lOldEmail = "old email"
	lAdmins   = "admins"
)

func userItem(u scangate.User, ver int64) item {
	it := userKey(u.ID)
	it[aID] = num(u.ID)
	it[aUsername] = str(u.Username)
	it[aUserEmail] = str(u.Email)
	it[aEmailKey] = str(emailKeyOf(u))
	it[aRole] = str(string(u.Role))
	it[aActive] = boolean(u.Active)
	it[aCreatedAt] = str(u.CreatedAt.String())
	it[aUpdatedAt] = str(u.UpdatedAt.String())
	it[aAddedBy] = numOrNull(u.AddedBy)
	it[aUpdatedBy] = numOrNull(u.UpdatedBy)
	if !u.TokensValidFrom.IsZero() {
		it[aValidFrom] = num(u.TokensValidFrom.UnixMilli())
	}
	it[aVer] = num(ver)
	it[aGSI2PK], it[aGSI2SK] = str(allUsersPK), str(fmt.Sprintf("%019d", u.ID)) // the users by id
	return it
}

func userFrom(it item) scangate.User {
	u := scangate.User{
		ID:        getN(it, aID),
		Username:  getS(it, aUsername),
		Email:     getS(it, aUserEmail),
		Role:      scangate.Role(getS(it, aRole)),
		Active:    getBool(it, aActive, true),
		CreatedAt: getTime(it, aCreatedAt),
		UpdatedAt: getTime(it, aUpdatedAt),
		AddedBy:   getNp(it, aAddedBy),
		UpdatedBy: getNp(it, aUpdatedBy),
	}
	if ms := getN(it, aValidFrom); ms > 0 {
		u.TokensValidFrom = time.UnixMilli(ms)
	}
	return u
}

// putMarker adds a uniqueness marker naming the user that holds it, with
// more attributes when extra is not nil.
func putMarker(t *tx, label string, k item, userID int64, extra item) {
	it := merge(item{aUserID: num(userID)}, extra)
	for n, v := range k {
		it[n] = v
	}
	t.put(label, it, when("attribute_not_exists("+ref(aPK)+")"))
}

// loginAttrs are what logging in needs of a user, kept on its username
// marker so that a login reads them with its throttling places in one
// round trip. The password hash lives only there.
func loginAttrs(u scangate.User) item {
	return item{aPwHash: str(u.PasswordHash), aActive: boolean(u.Active)}
}

// addAdmins moves the count of active admins; it may not fall below one.
func addAdmins(t *tx, delta int64, first bool) {
	var c *cond
	switch {
	case first:
		c = when("attribute_not_exists("+ref(aN)+") OR "+ref(aN)+" = :zero", ":zero", num(0))
	case delta < 0:
		c = when(ref(aN)+" > :one", ":one", num(1))
	}
	t.update(lAdmins, adminsKey, "ADD "+ref(aN)+" :d", item{":d": num(delta)}, c)
}

// CreateUser stores a new user with the next user id. The user, its username
// and e-mail markers (and the active-admin count) are written in one
// transaction: two round trips in all.
func (s *Store) CreateUser(ctx context.Context, u scangate.User, who scangate.Who) (scangate.User, error) {
	return s.createUser(ctx, u, false, who)
}

// Bootstrap stores the first admin of a deployment. It fails with a conflict
// when an active admin exists already.
func (s *Store) Bootstrap(ctx context.Context, u scangate.User, who scangate.Who) (scangate.User, error) {
	u.Role, u.Active = scangate.RoleAdmin, true
	return s.createUser(ctx, u, true, who)
}

func userTarget(id int64) scangate.Target {
	return scangate.Target{Type: "user", ID: strconv.FormatInt(id, 10)}
}

// userChanges are the audited fields of a user that changed from old to u.
func userChanges(old, u scangate.User) scangate.Changes {
	c := scangate.Changes{}
	if old.ID == 0 { // created
		c.Set("username", nil, u.Username)
		c.Set("user_email", nil, u.Email)
		c.Set("role", nil, string(u.Role))
		c.Set("active", nil, u.Active)
		return c
	}
	c.Set("user_email", old.Email, u.Email)
	c.Set("role", string(old.Role), string(u.Role))
	c.Set("active", old.Active, u.Active)
	return c
}

func (s *Store) createUser(ctx context.Context, u scangate.User, first bool, who scangate.Who) (scangate.User, error) {
	id, err := s.nextID(ctx, "user")
	if err != nil {
		return scangate.User{}, err
	}
	u.ID = id
	t := s.newTx()
	t.put(lUser, userItem(u, 1), when("attribute_not_exists("+ref(aPK)+")"))
	putMarker(t, lUsername, usernameKey(u.Username), id, loginAttrs(u))
	putMarker(t, lEmail, emailKey(emailKeyOf(u)), id, nil)
	if u.Role == scangate.RoleAdmin && u.Active {
		addAdmins(t, 1, first)
	}
	action := scangate.AuditUserCreate
	if first {
		action = scangate.AuditAdminBootstrap
	}
	s.addAudit(t, scangate.NewAudit(action, who, userTarget(id), userChanges(scangate.User{}, u), u.CreatedAt.Time))
	err = s.retry.Do(ctx, "create user", func(int) (bool, error) {
		err := s.commit(ctx, "create user", t)
		switch {
		case failed(err, lUsername):
			return true, scangate.Errorf(scangate.KindConflict, "the username %q is taken", u.Username)
		case failed(err, lEmail):
			return true, scangate.Errorf(scangate.KindConflict, "the e-mail address %q is taken", u.Email)
		case failed(err, lAdmins):
			return true, scangate.Errorf(scangate.KindConflict, "an active admin exists already")
		case lostRace(err):
			return false, nil
		}
		return true, err
	})
	return u, err
}

// User reads one user with a strongly consistent read.
func (s *Store) User(ctx context.Context, id int64) (scangate.User, error) {
	u, _, err := s.userVersion(ctx, id)
	return u, err
}

func (s *Store) userVersion(ctx context.Context, id int64) (scangate.User, int64, error) {
	it, err := s.getItem(ctx, "get user", userKey(id))
	if err != nil {
		return scangate.User{}, 0, err
	}
	if it == nil {
		return scangate.User{}, 0, scangate.Errorf(scangate.KindNotFound, "no user has the id %d", id)
	}
	return userFrom(it), getN(it, aVer), nil
}

// UpdateUser reads a user, applies change to it and writes it back under a
// version check, moving the e-mail marker and the active-admin count in the
// same transaction: two round trips unless a concurrent writer intervenes.
// A deactivation also kills every token issued until then, for good.
func (s *Store) UpdateUser(ctx context.Context, id int64, change func(*scangate.User) error, who scangate.Who) (scangate.User, error) {
	var updated scangate.User
	err := s.retry.Do(ctx, "update user", func(int) (bool, error) {
		old, ver, err := s.userVersion(ctx, id)
		if err != nil {
			return true, err
		}
		u := old
		if err := change(&u); err != nil {
			return true, err
		}
		if old.Active && !u.Active {
			u.TokensValidFrom = u.UpdatedAt.Time
		}
		t := s.userUpdateTx(old, u, ver)
		s.addAudit(t, scangate.NewAudit(scangate.AuditUserUpdate, who, userTarget(id), userChanges(old, u), u.UpdatedAt.Time))
		err = s.commit(ctx, "update user", t)
		switch {
		case err == nil:
			updated = u
			return true, nil
		case failed(err, lEmail):
			return true, scangate.Errorf(scangate.KindConflict, "the e-mail address %q is taken", u.Email)
		case failed(err, lAdmins):
			return true, scangate.Errorf(scangate.KindConflict, "the last active admin cannot be demoted or deactivated")
		case lostRace(err, lUser):
			return false, nil
		}
		return true, err
	})
	return updated, err
}

// userUpdateTx writes u over old (at version ver), moving the e-mail
// marker when the folded address changes and the admin count when u stops
// or starts being an active admin.
func (s *Store) userUpdateTx(old, u scangate.User, ver int64) *tx {
	t := s.newTx()
	t.put(lUser, userItem(u, ver+1), when(ref(aVer)+" = :ver", ":ver", num(ver)))
	if emailKeyOf(old) != emailKeyOf(u) {
		putMarker(t, lEmail, emailKey(emailKeyOf(u)), u.ID, nil)
		t.del(lOldEmail, emailKey(emailKeyOf(old)), nil)
	}
	if old.Active != u.Active {
		t.update(lUsername, usernameKey(u.Username), "SET "+ref(aActive)+" = :a", item{":a": boolean(u.Active)},
			when(ref(aUserID)+" = :id", ":id", num(u.ID)))
	}
	wasAdmin := old.Role == scangate.RoleAdmin && old.Active
	isAdmin := u.Role == scangate.RoleAdmin && u.Active
	switch {
	case wasAdmin && !isAdmin:
		addAdmins(t, -1, false)
	case !wasAdmin && isAdmin:
		addAdmins(t, 1, false)
	}
	return t
}

// UserByName reads the user holding a username, ignoring case.
func (s *Store) UserByName(ctx context.Context, username string) (scangate.User, error) {
	it, err := s.getItem(ctx, "get username", usernameKey(username))
	if err != nil {
		return scangate.User{}, err
	}
	if it == nil {
		return scangate.User{}, scangate.Errorf(scangate.KindNotFound, "no user has the username %q", username)
	}
	return s.User(ctx, getN(it, aUserID))
}
