package store

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/pkg/scangate"
)

// Item keys of users and their uniqueness markers.
func userKey(id int64) item            { return key("USER#"+strconv.FormatInt(id, 10), "USER") }
func usernameKey(username string) item { return key("USERNAME#"+scangate.Fold(username), "USERNAME") }
func emailKey(email string) item       { return key("EMAIL#"+scangate.Fold(email), "EMAIL") }

// adminsKey is the item counting active admins, so that the last one cannot
// be demoted or deactivated even by concurrent updates.
var adminsKey = key("COUNTER#active-admins", "COUNTER")

func userItem(u scangate.User, ver int64) item {
	it := userKey(u.ID)
	it["id"] = num(u.ID)
	it["username"] = str(u.Username)
	it["user_email"] = str(u.Email)
	it["role"] = str(string(u.Role))
	it["active"] = boolean(u.Active)
	it["pw_hash"] = str(u.PasswordHash)
	it["created_at"] = str(u.CreatedAt.String())
	it["updated_at"] = str(u.UpdatedAt.String())
	it["added_by_uid"] = numOrNull(u.AddedBy)
	it["updated_by_uid"] = numOrNull(u.UpdatedBy)
	it["ver"] = num(ver)
	return it
}

func userFrom(it item) scangate.User {
	return scangate.User{
		ID:           getN(it, "id"),
		Username:     getS(it, "username"),
		Email:        getS(it, "user_email"),
		Role:         scangate.Role(getS(it, "role")),
		Active:       getBool(it, "active", true),
		PasswordHash: getS(it, "pw_hash"),
		CreatedAt:    getTime(it, "created_at"),
		UpdatedAt:    getTime(it, "updated_at"),
		AddedBy:      getNp(it, "added_by_uid"),
		UpdatedBy:    getNp(it, "updated_by_uid"),
	}
}

func markerPut(table string, k item, userID int64) types.TransactWriteItem {
	it := item{"user_id": num(userID)}
	for n, v := range k {
		it[n] = v
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                           &table,
		Item:                                it,
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureNone,
	}}
}

func (s *Store) adminsDelta(delta int64) types.TransactWriteItem {
	u := &types.Update{
		TableName:                 &s.table,
		Key:                       adminsKey,
		UpdateExpression:          aws.String("ADD #n :d"),
		ExpressionAttributeNames:  map[string]string{"#n": "n"},
		ExpressionAttributeValues: item{":d": num(delta)},
	}
	if delta < 0 {
		u.ConditionExpression = aws.String("#n > :one")
		u.ExpressionAttributeValues[":one"] = num(1)
	}
	return types.TransactWriteItem{Update: u}
}

// CreateUser stores a new user with the next user id. The user, its username
// and e-mail markers (and the active-admin count) are written in one
// transaction: two round trips in all.
func (s *Store) CreateUser(ctx context.Context, u scangate.User) (scangate.User, error) {
	return s.createUser(ctx, u, false)
}

// Bootstrap stores the first admin of a deployment. It fails with a conflict
// when an active admin exists already.
func (s *Store) Bootstrap(ctx context.Context, u scangate.User) (scangate.User, error) {
	u.Role, u.Active = scangate.RoleAdmin, true
	return s.createUser(ctx, u, true)
}

func (s *Store) createUser(ctx context.Context, u scangate.User, first bool) (scangate.User, error) {
	id, err := s.nextID(ctx, "user")
	if err != nil {
		return scangate.User{}, err
	}
	u.ID = id
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: userItem(u, 1), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		markerPut(s.table, usernameKey(u.Username), id),
		markerPut(s.table, emailKey(u.Email), id),
	}
	if u.Role == scangate.RoleAdmin && u.Active {
		admins := s.adminsDelta(1)
		if first {
			admins.Update.ConditionExpression = aws.String("attribute_not_exists(#n) OR #n = :zero")
			admins.Update.ExpressionAttributeValues[":zero"] = num(0)
		}
		items = append(items, admins)
	}
	err = retry(ctx, "create user", func() (bool, error) {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		codes := cancelReasons(err)
		switch {
		case err == nil:
			return true, nil
		case conflicted(codes):
			return false, nil
		case codes != nil && codes[1] == "ConditionalCheckFailed":
			return true, scangate.Errorf(scangate.KindConflict, "the username %q is taken", u.Username)
		case codes != nil && codes[2] == "ConditionalCheckFailed":
			return true, scangate.Errorf(scangate.KindConflict, "the e-mail address %q is taken", u.Email)
		case len(codes) > 3 && codes[3] == "ConditionalCheckFailed":
			return true, scangate.Errorf(scangate.KindConflict, "an active admin exists already")
		}
		return true, dbErr("create user", err)
	})
	return u, err
}

// User reads one user with a strongly consistent read.
func (s *Store) User(ctx context.Context, id int64) (scangate.User, error) {
	u, _, err := s.userVersion(ctx, id)
	return u, err
}

func (s *Store) userVersion(ctx context.Context, id int64) (scangate.User, int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: userKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return scangate.User{}, 0, dbErr("get user", err)
	}
	if out.Item == nil {
		return scangate.User{}, 0, scangate.Errorf(scangate.KindNotFound, "no user has the id %d", id)
	}
	return userFrom(out.Item), getN(out.Item, "ver"), nil
}

// UpdateUser reads a user, applies change to it and writes it back under a
// version check, moving the e-mail marker and the active-admin count in the
// same transaction: two round trips unless a concurrent writer intervenes.
func (s *Store) UpdateUser(ctx context.Context, id int64, change func(*scangate.User) error) (scangate.User, error) {
	var updated scangate.User
	err := retry(ctx, "update user", func() (bool, error) {
		old, ver, err := s.userVersion(ctx, id)
		if err != nil {
			return true, err
		}
		u := old
		if err := change(&u); err != nil {
			return true, err
		}
		put := userItem(u, ver+1)
		items := []types.TransactWriteItem{{Put: &types.Put{
			TableName:                 &s.table,
			Item:                      put,
			ConditionExpression:       aws.String("ver = :ver"),
			ExpressionAttributeValues: item{":ver": num(ver)},
		}}}
		emailAt := -1
		if scangate.Fold(old.Email) != scangate.Fold(u.Email) {
			emailAt = len(items)
			items = append(items, markerPut(s.table, emailKey(u.Email), id),
				types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: emailKey(old.Email)}})
		}
		wasAdmin := old.Role == scangate.RoleAdmin && old.Active
		isAdmin := u.Role == scangate.RoleAdmin && u.Active
		adminAt := -1
		if wasAdmin != isAdmin {
			adminAt = len(items)
			d := int64(1)
			if wasAdmin {
				d = -1
			}
			items = append(items, s.adminsDelta(d))
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		codes := cancelReasons(err)
		switch {
		case err == nil:
			updated = u
			return true, nil
		case conflicted(codes), codes != nil && codes[0] == "ConditionalCheckFailed":
			return false, nil
		case emailAt >= 0 && codes != nil && codes[emailAt] == "ConditionalCheckFailed":
			return true, scangate.Errorf(scangate.KindConflict, "the e-mail address %q is taken", u.Email)
		case adminAt >= 0 && codes != nil && codes[adminAt] == "ConditionalCheckFailed":
			return true, scangate.Errorf(scangate.KindConflict, "the last active admin cannot be demoted or deactivated")
		}
		return true, dbErr("update user", err)
	})
	return updated, err
}

// UserByName reads the user holding a username, ignoring case.
func (s *Store) UserByName(ctx context.Context, username string) (scangate.User, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: usernameKey(username), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return scangate.User{}, dbErr("get username", err)
	}
	if out.Item == nil {
		return scangate.User{}, scangate.Errorf(scangate.KindNotFound, "no user has the username %q", username)
	}
	return s.User(ctx, getN(out.Item, "user_id"))
}
