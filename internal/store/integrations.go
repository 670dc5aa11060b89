package store

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// An integration (commit statuses for one vc_id) is one item, its token
// sealed, and its status deliveries share its partition:
//
//	INTEGRATION#<vc_id> / INTEGRATION   type, api_url, token (sealed), ...
//
// The newest gate wins on each commit through a claim item per commit:
//
//	STATUS#<vc_id>#<repository>#<sha> / STATUS   seq (the greatest gate
//	    sequence claimed), lease (epoch ms until which a post holds it), ttl

const (
	aAPIURL      = "api_url"
	aToken       = "token" // sealed
	aSeq         = "seq"
	aAppID       = "app_id"
	aInstallID   = "installation_id"
	lIntegration = "integration"
)

func integrationPK(vcID int64) string { return KeyIntegration + strconv.FormatInt(vcID, 10) }

func integrationKey(vcID int64) item { return key(integrationPK(vcID), "INTEGRATION") }

func integrationFrom(it item) scangate.Integration {
	return scangate.Integration{VcID: getN(it, aVcID), Type: getS(it, aType), APIURL: getS(it, aAPIURL), Token: getS(it, aToken),
		AppID: getN(it, aAppID), InstallationID: getN(it, aInstallID), UpdatedBy: getN(it, aUpdBy), UpdatedAt: getTime(it, aUpdatedAt)}
}

// Integration reads the integration of a vc_id (strongly consistent).
func (s *Store) Integration(ctx context.Context, vcID int64) (scangate.Integration, error) {
	it, err := s.getItem(ctx, "get integration", integrationKey(vcID))
	if err != nil {
		return scangate.Integration{}, err
	}
	if it == nil {
		return scangate.Integration{}, scangate.Errorf(scangate.KindNotFound, "vc_id %d has no integration", vcID)
	}
	return integrationFrom(it), nil
}

// DeleteIntegration removes the integration of a vc_id, with its audit
// entry (the type and API URL it had; a token was set): 404 when there is
// none. Its deliveries stay listed; those still pending are cancelled when
// they come up, and gate changes are no longer reported to it.
func (s *Store) DeleteIntegration(ctx context.Context, vcID int64, who scangate.Who, now time.Time) error {
	return s.retry.Do(ctx, "delete integration", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get integration", integrationKey(vcID))
		if err != nil || it == nil {
			if err == nil {
				err = scangate.Errorf(scangate.KindNotFound, "vc_id %d has no integration", vcID)
			}
			return true, err
		}
		cur := integrationFrom(it)
		changes := scangate.Changes{}
		changes.Set("type", cur.Type, nil)
		changes.Set("api_url", cur.APIURL, nil)
		changes.Set("token", "set", nil)
		t := s.newTx()
		t.del(lIntegration, integrationKey(vcID), when(ref(aVer)+" = :ver", ":ver", num(getN(it, aVer))))
		s.addAudit(t, scangate.NewAudit(scangate.AuditIntegrationDelete, who,
			scangate.Target{Type: "integration", ID: strconv.FormatInt(vcID, 10)}, changes, now))
		err = s.commit(ctx, "delete integration", t)
		if lostRace(err, lIntegration) {
			return false, nil
		}
		return true, err
	})
}

// PutIntegration creates or replaces the integration of in.VcID, with its
// audit entry. An empty in.Token keeps the token stored (a change of the
// API's URL alone); a new integration must carry one. The audit entry
// says that a token was set, never the token.
func (s *Store) PutIntegration(ctx context.Context, in scangate.Integration, who scangate.Who, now time.Time) (scangate.Integration, error) {
	err := s.retry.Do(ctx, "put integration", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get integration", integrationKey(in.VcID))
		if err != nil {
			return true, err
		}
		var cur scangate.Integration
		var ver int64
		c := when("attribute_not_exists(" + ref(aPK) + ")")
		if it != nil {
			cur, ver = integrationFrom(it), getN(it, aVer)
			c = when(ref(aVer)+" = :ver", ":ver", num(ver))
		}
		changes := scangate.Changes{}
		if in.Token == "" {
			secret := "/token"
			if in.Type == scangate.IntegrationGitHubApp {
				secret = "/private_key"
			}
			switch {
			case cur.Token == "":
				var p scangate.Problems
				p.Add(secret, "is required: vc_id %d has no token yet", in.VcID)
				return true, p.Err()
			case cur.Type != in.Type && (cur.Type == scangate.IntegrationGitHubApp || in.Type == scangate.IntegrationGitHubApp):
				// A token is no App key, nor a key a token.
				var p scangate.Problems
				p.Add(secret, "is required: the type changes from %s to %s", cur.Type, in.Type)
				return true, p.Err()
			}
			in.Token = cur.Token
		} else if in.Type == scangate.IntegrationGitHubApp {
			changes.Set("private_key", nil, "set")
		} else {
			changes.Set("token", nil, "set")
		}
		in.UpdatedAt, in.UpdatedBy = scangate.At(now), actorID(who)
		changes.Set("type", nullable(cur.Type), in.Type)
		changes.Set("api_url", nullable(cur.APIURL), in.APIURL)
		attrs := item{aVcID: num(in.VcID), aType: str(in.Type), aAPIURL: str(in.APIURL),
			aToken: str(in.Token), aUpdBy: num(in.UpdatedBy), aUpdatedAt: str(in.UpdatedAt.String()), aVer: num(ver + 1)}
		if in.Type == scangate.IntegrationGitHubApp {
			changes.Set("app_id", nullableN(cur.AppID), in.AppID)
			changes.Set("installation_id", nullableN(cur.InstallationID), in.InstallationID)
			attrs[aAppID], attrs[aInstallID] = num(in.AppID), num(in.InstallationID)
		}
		t := s.newTx()
		t.put(lIntegration, merge(integrationKey(in.VcID), attrs), c)
		s.addAudit(t, scangate.NewAudit(scangate.AuditIntegrationUpdate, who,
			scangate.Target{Type: "integration", ID: strconv.FormatInt(in.VcID, 10)}, changes, now))
		err = s.commit(ctx, "put integration", t)
		if lostRace(err, lIntegration) {
			return false, nil
		}
		return true, err
	})
	return in, err
}

// Claim outcomes (ClaimStatus).
const (
	Claimed    = "claimed"    // the caller holds the commit until its lease ends
	Superseded = "superseded" // a newer gate was claimed: drop this one
	Busy       = "busy"       // another post of the commit is under way: try again shortly
)

func statusKey(vcID, repoID int64, sha string) item {
	return key(KeyStatus+strconv.FormatInt(vcID, 10)+"#"+strconv.FormatInt(repoID, 10)+"#"+sha, "STATUS")
}

// ClaimStatus claims the right to post the status of gate sequence seq
// for a commit until lease (epoch ms): granted when no greater sequence
// was claimed and no other post holds the commit (its lease ended before
// now). So statuses of one commit are posted one at a time, the newest
// last.
func (s *Store) ClaimStatus(ctx context.Context, vcID, repoID int64, sha string, seq int64, now time.Time, lease int64) (string, error) {
	return s.claim(ctx, "commit status", statusKey(vcID, repoID, sha), seq, now, lease)
}

// ReleaseStatus ends the lease of the post of seq on a commit, so that the
// next one need not wait for it to run out.
func (s *Store) ReleaseStatus(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64) error {
	return s.release(ctx, "commit status", statusKey(vcID, repoID, sha), seq, lease)
}

// claim sets a claim item's sequence to seq and its lease to lease unless
// a greater sequence was claimed or another holder's lease has not ended.
func (s *Store) claim(ctx context.Context, what string, k item, seq int64, now time.Time, lease int64) (string, error) {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:              k,
		UpdateExpression: aws.String("SET " + ref(aSeq) + " = :seq, " + ref(aLease) + " = :lease, " + ref(aTTL) + " = :ttl"),
		ConditionExpression: aws.String("attribute_not_exists(" + ref(aPK) + ") OR (" + ref(aSeq) + " <= :seq AND " +
			ref(aLease) + " < :now)"),
		ExpressionAttributeValues: item{":seq": num(seq), ":lease": num(lease), ":now": num(now.UnixMilli()),
			":ttl": num(now.Add(DefaultEventRetention).Unix())},
	})
	if err == nil {
		return Claimed, nil
	}
	if !conditionFailed(err) {
		return "", dbErr("claim "+what, err)
	}
	it, err := s.getItem(ctx, "get "+what+" claim", k)
	if err != nil {
		return "", err
	}
	if it != nil && getN(it, aSeq) > seq {
		return Superseded, nil
	}
	return Busy, nil
}

// release ends the lease of the holder of seq.
func (s *Store) release(ctx context.Context, what string, k item, seq, lease int64) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       k,
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :zero"),
		ConditionExpression:       aws.String(ref(aSeq) + " = :seq AND " + ref(aLease) + " = :lease"),
		ExpressionAttributeValues: item{":zero": num(0), ":seq": num(seq), ":lease": num(lease)},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("release "+what, err)
	}
	return nil
}

// nullableN is n, or nil for 0 (not set), for an audit entry.
func nullableN(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

// What a commit's check run (a GitHub App's) and a merge request's note
// (GitLab's) show is kept on their claim items, beside the claimed
// sequence: the provider's id of the run or note, the gate sequence it
// shows in full, and, for a run, the keys of the annotations sent to it
// (GitHub appends every request's annotations to a run's, so each is sent
// once). A merge request's note claim is
//
//	STATUS#<vc_id>#<repository>#MR#<number> / NOTE   seq, lease, note_id, note_seq, ttl
//
// in the family of the commits' claims (a commit hash has no '#').
const (
	aCheckRun = "check_run"
	aCheckSeq = "check_seq"
	aCheckAnn = "check_sent"
	aNoteID   = "note_id"
	aNoteSeq  = "note_seq"
)

// Shown is what a check run or a note shows: its id on the provider (0
// when none was created), the gate sequence it shows in full (0: none
// yet), and the keys of the annotations sent to it (check runs only).
type Shown struct {
	ID, Seq int64
	Sent    []string
}

// shownAttrs name where a Shown is kept on a claim item.
type shownAttrs struct{ id, seq, sent string }

var (
	checkRunAttrs = shownAttrs{aCheckRun, aCheckSeq, aCheckAnn}
	noteAttrs     = shownAttrs{aNoteID, aNoteSeq, ""}
)

// noteKey is the claim item of a merge request's note.
func noteKey(vcID, repoID, number int64) item {
	return key("STATUS#"+strconv.FormatInt(vcID, 10)+"#"+strconv.FormatInt(repoID, 10)+"#MR#"+strconv.FormatInt(number, 10), "NOTE")
}

// CheckRun reads what a commit's check run shows.
func (s *Store) CheckRun(ctx context.Context, vcID, repoID int64, sha string) (Shown, error) {
	return s.shown(ctx, "get check run", statusKey(vcID, repoID, sha), checkRunAttrs)
}

// SetCheckRun records what the commit's check run shows, while the post
// of seq holds the commit (its claim is seq and its lease lease): a post
// that lost its hold records nothing.
func (s *Store) SetCheckRun(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64, sh Shown) error {
	return s.setShown(ctx, "record check run", statusKey(vcID, repoID, sha), checkRunAttrs, seq, lease, sh)
}

// ClaimNote claims the right to write the note of gate sequence seq on a
// merge request (number, in the repository of repoID) until lease, as
// ClaimStatus does for a commit: the notes of one merge request are
// written one at a time, the newest gate last, whatever its commits.
func (s *Store) ClaimNote(ctx context.Context, vcID, repoID, number, seq int64, now time.Time, lease int64) (string, error) {
	return s.claim(ctx, "merge request note", noteKey(vcID, repoID, number), seq, now, lease)
}

// ReleaseNote ends the lease of the note's writer of seq.
func (s *Store) ReleaseNote(ctx context.Context, vcID, repoID, number, seq, lease int64) error {
	return s.release(ctx, "merge request note", noteKey(vcID, repoID, number), seq, lease)
}

// Note reads what a merge request's note shows.
func (s *Store) Note(ctx context.Context, vcID, repoID, number int64) (Shown, error) {
	return s.shown(ctx, "get merge request note", noteKey(vcID, repoID, number), noteAttrs)
}

// SetNote records what a merge request's note shows, while the writer of
// seq holds its claim.
func (s *Store) SetNote(ctx context.Context, vcID, repoID, number, seq, lease int64, sh Shown) error {
	return s.setShown(ctx, "record merge request note", noteKey(vcID, repoID, number), noteAttrs, seq, lease, sh)
}

func (s *Store) shown(ctx context.Context, op string, k item, a shownAttrs) (Shown, error) {
	it, err := s.getItem(ctx, op, k)
	if err != nil || it == nil {
		return Shown{}, err
	}
	sh := Shown{ID: getN(it, a.id), Seq: getN(it, a.seq)}
	if a.sent != "" {
		sh.Sent = getStrings(it, a.sent)
	}
	return sh, nil
}

func (s *Store) setShown(ctx context.Context, op string, k item, a shownAttrs, seq, lease int64, sh Shown) error {
	set := "SET " + ref(a.id) + " = :id, " + ref(a.seq) + " = :shown"
	vals := item{":id": num(sh.ID), ":shown": num(sh.Seq), ":seq": num(seq), ":lease": num(lease)}
	if a.sent != "" && len(sh.Sent) > 0 {
		it := item{}
		setStrings(it, ":sent", sh.Sent)
		set += ", " + ref(a.sent) + " = :sent"
		vals[":sent"] = it[":sent"]
	}
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       k,
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String(ref(aSeq) + " = :seq AND " + ref(aLease) + " = :lease"),
		ExpressionAttributeValues: vals,
	})
	if err != nil && !conditionFailed(err) {
		return dbErr(op, err)
	}
	return nil
}
