package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A token is stored by the SHA-256 of its secret, which is how the
// authorizer finds it, with an id item that finds it by id; a user's
// personal tokens are also listed in a registry item, which keeps their
// number and the uniqueness of their names exact under concurrency:
//
//	TOKEN#<sha256 hex> / TOKEN        GSI1: USERTOKENS#<user> / <created_at>#<id19>
//	TOKENID#<id> / TOKENID            the hash and the user
//	USER#<user> / TOKENS              personal tokens: id -> name key, expiry; ver

func tokenKey(hash string) item { return key("TOKEN#"+hash, "TOKEN") }

func tokenIDKey(id int64) item { return key("TOKENID#"+strconv.FormatInt(id, 10), "TOKENID") }

func registryKey(userID int64) item { return key("USER#"+strconv.FormatInt(userID, 10), "TOKENS") }

func userTokensPK(userID int64) string { return "USERTOKENS#" + strconv.FormatInt(userID, 10) }

// Labels of token transactions.
const (
	lToken    = "token"
	lTokenID  = "token id"
	lRegistry = "registry"
	lSlot     = "slot"
)

// Attributes of tokens (shared ones: attrs.go).
const (
	aScope      = "scope"
	aTokenRepos = "repos"     // a scoped token's repositories (scangate.FormatRepos)
	aLastUsed   = "last_used" // epoch ms
	aTokenHash  = "hash"
	aEntries    = "p" // a registry's personal tokens
	aNameKey    = "n"
	aExpiry     = "e"
)

// expiredItemGrace is how long after its expiry DynamoDB's TTL may delete an
// item; the service itself checks expiry, so the TTL only reclaims space.
const expiredItemGrace = 24 * time.Hour

func tokenItem(t scangate.Token) item {
	it := tokenKey(t.Hash)
	it[aID] = num(t.ID)
	it[aUserID] = num(t.UserID)
	it[aTokenKind] = str(t.Kind)
	if t.Name != "" {
		it[aName] = str(t.Name)
	}
	it[aScope] = str(t.Scope)
	if t.Repos != nil {
		it[aTokenRepos] = str(scangate.FormatRepos(t.Repos))
	}
	it[aCreatedAt] = str(scangate.At(t.CreatedAt).String())
	it[aExpiresAt] = num(t.ExpiresAt.Unix())
	it[aTTL] = num(t.ExpiresAt.Add(expiredItemGrace).Unix())
	it[aGSI1PK] = str(userTokensPK(t.UserID))
	it[aGSI1SK] = str(scangate.At(t.CreatedAt).String() + "#" + fmt.Sprintf("%019d", t.ID))
	return it
}

func tokenFrom(it item) scangate.Token {
	t := scangate.Token{
		ID:        getN(it, aID),
		Hash:      getS(it, aPK)[len("TOKEN#"):],
		UserID:    getN(it, aUserID),
		Kind:      getS(it, aTokenKind),
		Name:      getS(it, aName),
		Scope:     getS(it, aScope),
		CreatedAt: getTime(it, aCreatedAt).Time,
		ExpiresAt: time.Unix(getN(it, aExpiresAt), 0),
		Revoked:   getBool(it, aRevoked, false),
	}
	if t.Scope == "" {
		t.Scope = scangate.ScopeWrite // tokens from before scopes
	}
	if s := getS(it, aTokenRepos); s != "" {
		repos, ok := scangate.ParseRepos(s)
		if !ok {
			// Never written so; a token scoped to no repository reaches
			// none rather than every one.
			repos = []scangate.RepoRef{}
		}
		t.Repos = repos
	}
	if ms := getN(it, aLastUsed); ms > 0 {
		t.LastUsedAt = time.UnixMilli(ms)
	}
	return t
}

func tokenIDItem(t scangate.Token) item {
	it := tokenIDKey(t.ID)
	it[aTokenHash], it[aUserID] = str(t.Hash), num(t.UserID)
	it[aTTL] = num(t.ExpiresAt.Add(expiredItemGrace).Unix())
	return it
}

// putToken adds a new token (its record and its id item) and its audit
// entry to a transaction.
func (s *Store) putToken(t *tx, tok scangate.Token, who scangate.Who) {
	t.put(lToken, tokenItem(tok), when("attribute_not_exists("+ref(aPK)+")"))
	t.put(lTokenID, tokenIDItem(tok), when("attribute_not_exists("+ref(aPK)+")"))
	changes := scangate.Changes{}
	changes.Set("kind", nil, tok.Kind)
	changes.Set("scope", nil, tok.Scope)
	changes.Set("expires_at", nil, scangate.At(tok.ExpiresAt).String())
	if tok.Name != "" {
		changes.Set("name", nil, tok.Name)
	}
	if tok.Repos != nil {
		changes.Set("repos", nil, scangate.FormatRepos(tok.Repos))
	}
	changes.Set("user_id", nil, tok.UserID)
	s.addAudit(t, scangate.NewAudit(scangate.AuditTokenCreate, who, tokenTarget(tok.ID), changes, tok.CreatedAt))
}

func tokenTarget(id int64) scangate.Target {
	return scangate.Target{Type: "token", ID: strconv.FormatInt(id, 10)}
}

// PutToken stores a token with its audit entry, as issued (tests and
// tools; logins and personal tokens have their own ways, with their rules).
func (s *Store) PutToken(ctx context.Context, tok scangate.Token, who scangate.Who) error {
	if tok.ID == 0 {
		id, err := s.TokenID(ctx)
		if err != nil {
			return err
		}
		tok.ID = id
	}
	if tok.Scope == "" {
		tok.Scope = scangate.ScopeWrite
	}
	t := s.newTx()
	s.putToken(t, tok, who)
	return s.commit(ctx, "put token", t)
}

// TokenID allocates the id of a token about to be issued.
func (s *Store) TokenID(ctx context.Context) (int64, error) { return s.nextID(ctx, "token") }

// registry is a user's personal tokens that are neither expired nor
// revoked, by id, with the version that guards it.
type registry struct {
	entries map[int64]registryEntry
	ver     int64
}

type registryEntry struct {
	nameKey string
	expires int64 // epoch seconds
}

func (s *Store) readRegistry(ctx context.Context, userID int64, now time.Time) (registry, error) {
	it, err := s.getItem(ctx, "get personal tokens", registryKey(userID))
	if err != nil {
		return registry{}, err
	}
	r := registry{entries: map[int64]registryEntry{}, ver: getN(it, aVer)}
	if m, ok := it[aEntries].(*types.AttributeValueMemberM); ok {
		for id, v := range m.Value {
			e, ok := v.(*types.AttributeValueMemberM)
			n, _ := strconv.ParseInt(id, 10, 64)
			if ok && getN(e.Value, aExpiry) > now.Unix() {
				r.entries[n] = registryEntry{nameKey: getS(e.Value, aNameKey), expires: getN(e.Value, aExpiry)}
			}
		}
	}
	return r, nil
}

// write puts the registry back under its version.
func (r registry) write(t *tx, userID int64) {
	entries := item{}
	for id, e := range r.entries {
		entries[strconv.FormatInt(id, 10)] = &types.AttributeValueMemberM{Value: item{aNameKey: str(e.nameKey), aExpiry: num(e.expires)}}
	}
	it := merge(registryKey(userID), item{aVer: num(r.ver + 1)})
	if len(entries) > 0 { // the embedded server stores no empty map
		it[aEntries] = &types.AttributeValueMemberM{Value: entries}
	}
	c := when(ref(aVer)+" = :ver", ":ver", num(r.ver))
	if r.ver == 0 {
		c = when("attribute_not_exists(" + ref(aPK) + ")")
	}
	t.put(lRegistry, it, c)
}

// CreatePersonalToken stores a personal token (its hash; the secret is
// the caller's to show once): at most MaxPersonalTokens unexpired ones per
// user, names unique per user once folded by fold (internal/emailfold.Fold, the
// rules of e-mail addresses), exact under concurrency. The registry keeps
// each name folded; a name kept by an earlier rule (simple case folding)
// is folded again when compared, which gives the same form.
func (s *Store) CreatePersonalToken(ctx context.Context, tok scangate.Token, fold func(string) string, who scangate.Who) error {
	key := fold(tok.Name)
	return s.retry.Do(ctx, "create token", func(int) (bool, error) {
		reg, err := s.readRegistry(ctx, tok.UserID, tok.CreatedAt)
		if err != nil {
			return true, err
		}
		for _, e := range reg.entries {
			if fold(e.nameKey) == key {
				return true, scangate.Errorf(scangate.KindConflict, "a token named %q exists already", tok.Name)
			}
		}
		if len(reg.entries) >= scangate.MaxPersonalTokens {
			return true, scangate.Errorf(scangate.KindConflict, "a user may hold at most %d unexpired personal tokens; revoke one first", scangate.MaxPersonalTokens)
		}
		reg.entries[tok.ID] = registryEntry{nameKey: key, expires: tok.ExpiresAt.Unix()}
		t := s.newTx()
		reg.write(t, tok.UserID)
		s.putToken(t, tok, who)
		err = s.commit(ctx, "create token", t)
		if lostRace(err, lRegistry) {
			return false, nil
		}
		return true, err
	})
}

// TokenUser reads a token and the user it names in one BatchGetItem round
// trip. A missing token or user is reported as nil.
func (s *Store) TokenUser(ctx context.Context, hash string, userID int64) (*scangate.Token, *scangate.User, error) {
	items, err := s.batchGet(ctx, "get token and user", []item{tokenKey(hash), userKey(userID)})
	if err != nil {
		return nil, nil, err
	}
	var tok *scangate.Token
	var user *scangate.User
	for _, it := range items {
		switch getS(it, aSK) {
		case "TOKEN":
			t := tokenFrom(it)
			tok = &t
		case "USER":
			u := userFrom(it)
			user = &u
		}
	}
	return tok, user, nil
}

// TouchToken records that a token was used now, if its last use is more
// than LastUsedResolution ago (so at most one write a minute a token).
func (s *Store) TouchToken(ctx context.Context, hash string, now time.Time) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       tokenKey(hash),
		UpdateExpression:          aws.String("SET " + ref(aLastUsed) + " = :now"),
		ConditionExpression:       aws.String("attribute_exists(" + ref(aPK) + ") AND (attribute_not_exists(" + ref(aLastUsed) + ") OR " + ref(aLastUsed) + " < :stale)"),
		ExpressionAttributeValues: item{":now": num(now.UnixMilli()), ":stale": num(now.Add(-scangate.LastUsedResolution).UnixMilli())},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("record token use", err)
	}
	return nil
}

// RevokeToken revokes the token with the id, of the user owner unless
// owner is 0 (an admin may revoke any): KindNotFound for no such token, a
// token of another user, or one revoked or expired already.
func (s *Store) RevokeToken(ctx context.Context, id, owner int64, who scangate.Who, now time.Time) error {
	it, err := s.getItem(ctx, "get token id", tokenIDKey(id))
	if err != nil {
		return err
	}
	if it == nil || owner != 0 && getN(it, aUserID) != owner {
		return scangate.Errorf(scangate.KindNotFound, "no token of yours has the id %d", id)
	}
	return s.revoke(ctx, getS(it, aTokenHash), who, now, false)
}

// RevokeTokenHash revokes the token of a secret's hash (the admin CLI):
// KindNotFound for no such token; a token revoked or expired already is
// left as it is.
func (s *Store) RevokeTokenHash(ctx context.Context, hash string, who scangate.Who, now time.Time) error {
	return s.revoke(ctx, hash, who, now, true)
}

// revoke revokes a live token; one revoked or expired already is not
// found, or, when dead is true, left as it is.
func (s *Store) revoke(ctx context.Context, hash string, who scangate.Who, now time.Time, dead bool) error {
	return s.retry.Do(ctx, "revoke token", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get token", tokenKey(hash))
		if err != nil {
			return true, err
		}
		if it == nil {
			return true, scangate.Errorf(scangate.KindNotFound, "no such token")
		}
		tok := tokenFrom(it)
		if tok.Revoked || !now.Before(tok.ExpiresAt) {
			if dead {
				return true, nil
			}
			return true, scangate.Errorf(scangate.KindNotFound, "the token %d is revoked or expired already", tok.ID)
		}
		t := s.newTx()
		t.update(lToken, tokenKey(hash), "SET "+ref(aRevoked)+" = :t", item{":t": boolean(true)},
			when("attribute_not_exists("+ref(aRevoked)+") OR "+ref(aRevoked)+" = :f", ":f", boolean(false)))
		if tok.Kind == scangate.TokenPersonal {
			reg, err := s.readRegistry(ctx, tok.UserID, now)
			if err != nil {
				return true, err
			}
			delete(reg.entries, tok.ID)
			reg.write(t, tok.UserID)
		}
		changes := scangate.Changes{}
		changes.Set("revoked", false, true)
		s.addAudit(t, scangate.NewAudit(scangate.AuditTokenRevoke, who, tokenTarget(tok.ID), changes, now))
		err = s.commit(ctx, "revoke token", t)
		if lostRace(err, lToken, lRegistry) {
			return false, nil
		}
		return true, err
	})
}

// TokensPage lists a user's tokens that are neither expired nor revoked,
// newest first: one query of the index (keys) and one batch read a page.
func (s *Store) TokensPage(ctx context.Context, userID int64, now time.Time, limit int, after map[string]string) (scangate.Page[scangate.Token], error) {
	q := pageQuery{index: GSI1, pk: aGSI1PK, sk: aGSI1SK, value: userTokensPK(userID), newest: true}
	p, err := s.queryPage(ctx, "list tokens", q, limit, after)
	if err == nil {
		p.Items, err = s.readKeys(ctx, "get tokens", p.Items)
	}
	if err != nil {
		return scangate.Page[scangate.Token]{}, err
	}
	p.Items = slices.DeleteFunc(p.Items, func(it item) bool { t := tokenFrom(it); return t.Revoked || !now.Before(t.ExpiresAt) })
	return pageOf(q, p, tokenFrom), nil
}

// RevokeUserTokens revokes every live token of a user (the admin CLI) and
// reports how many.
func (s *Store) RevokeUserTokens(ctx context.Context, userID int64, who scangate.Who, now time.Time) (int, error) {
	items, err := s.queryAll(ctx, "list user tokens", &dynamodb.QueryInput{
		IndexName:                 aws.String(GSI1),
		KeyConditionExpression:    aws.String(ref(aGSI1PK) + " = :pk"),
		ExpressionAttributeValues: item{":pk": str(userTokensPK(userID))},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range items {
		err := s.revoke(ctx, getS(it, aPK)[len("TOKEN#"):], who, now, false)
		switch {
		case scangate.KindOf(err) == scangate.KindNotFound:
		case err != nil:
			return n, fmt.Errorf("revoke tokens of user %d: %w", userID, err)
		default:
			n++
		}
	}
	return n, nil
}
