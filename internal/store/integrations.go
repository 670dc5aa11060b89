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

func integrationPK(vcID int64) string { return "INTEGRATION#" + strconv.FormatInt(vcID, 10) }

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
	return key("STATUS#"+strconv.FormatInt(vcID, 10)+"#"+strconv.FormatInt(repoID, 10)+"#"+sha, "STATUS")
}

// ClaimStatus claims the right to post the status of gate sequence seq
// for a commit until lease (epoch ms): granted when no greater sequence
// was claimed and no other post holds the commit (its lease ended before
// now). So statuses of one commit are posted one at a time, the newest
// last.
func (s *Store) ClaimStatus(ctx context.Context, vcID, repoID int64, sha string, seq int64, now time.Time, lease int64) (string, error) {
	k := statusKey(vcID, repoID, sha)
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
		return "", dbErr("claim commit status", err)
	}
	it, err := s.getItem(ctx, "get commit status claim", k)
	if err != nil {
		return "", err
	}
	if it != nil && getN(it, aSeq) > seq {
		return Superseded, nil
	}
	return Busy, nil
}

// ReleaseStatus ends the lease of the post of seq on a commit, so that the
// next one need not wait for it to run out.
func (s *Store) ReleaseStatus(ctx context.Context, vcID, repoID int64, sha string, seq, lease int64) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       statusKey(vcID, repoID, sha),
		UpdateExpression:          aws.String("SET " + ref(aLease) + " = :zero"),
		ConditionExpression:       aws.String(ref(aSeq) + " = :seq AND " + ref(aLease) + " = :lease"),
		ExpressionAttributeValues: item{":zero": num(0), ":seq": num(seq), ":lease": num(lease)},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("release commit status", err)
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

// The check run of a commit (a GitHub App's) is kept on the commit's claim
// item, beside the claimed sequence: its id, and the gate sequence it
// shows.
const (
	aCheckRun = "check_run"
	aCheckSeq = "check_seq"
)

// CheckRun reads the id of a commit's check run and the gate sequence it
// shows (0, 0 when none was created).
func (s *Store) CheckRun(ctx context.Context, vcID, repoID int64, sha string) (id, seq int64, err error) {
	it, err := s.getItem(ctx, "get check run", statusKey(vcID, repoID, sha))
	if err != nil || it == nil {
		return 0, 0, err
	}
	return getN(it, aCheckRun), getN(it, aCheckSeq), nil
}

// SetCheckRun records the commit's check run id and the sequence it now
// shows, while the post of seq holds the commit (its claim is seq and its
// lease lease): a post that lost its hold records nothing.
func (s *Store) SetCheckRun(ctx context.Context, vcID, repoID int64, sha string, seq, lease, id int64) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       statusKey(vcID, repoID, sha),
		UpdateExpression:          aws.String("SET " + ref(aCheckRun) + " = :id, " + ref(aCheckSeq) + " = :seq"),
		ConditionExpression:       aws.String(ref(aSeq) + " = :seq AND " + ref(aLease) + " = :lease"),
		ExpressionAttributeValues: item{":id": num(id), ":seq": num(seq), ":lease": num(lease)},
	})
	if err != nil && !conditionFailed(err) {
		return dbErr("record check run", err)
	}
	return nil
}
