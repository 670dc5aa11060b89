package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/scangate"
)

// A trust of CI id tokens is one item, all of them in one partition so
// that the exchange of an id token reads every trust in one Query (an
// admin keeps a handful):
//
//	OIDCTRUST / TRUST#<name>   issuer, audience, repos (scangate.FormatRepos),
//	    conditions (a JSON object of claim to glob), ...

const (
	aIssuer     = "issuer"
	aAudience   = "audience"
	aConditions = "conditions"
	lTrust      = "trust"
)

const trustPK = "OIDCTRUST"

func trustKey(name string) item { return key(trustPK, "TRUST#"+name) }

func trustFrom(it item) (scangate.Trust, error) {
	t := scangate.Trust{Name: getS(it, aName), Issuer: getS(it, aIssuer), Audience: getS(it, aAudience),
		UpdatedBy: getN(it, aUpdBy), UpdatedAt: getTime(it, aUpdatedAt)}
	repos, ok := scangate.ParseRepos(getS(it, aRepos))
	if !ok {
		return scangate.Trust{}, fmt.Errorf("the trust %s holds unreadable repositories", t.Name)
	}
	t.Repos = repos
	if err := json.Unmarshal([]byte(getS(it, aConditions)), &t.Conditions); err != nil {
		return scangate.Trust{}, fmt.Errorf("the trust %s holds unreadable conditions: %w", t.Name, err)
	}
	return t, nil
}

func trustChanges(changes scangate.Changes, cur, next scangate.Trust) {
	set := func(name, a, b string) {
		if a != b {
			changes.Set(name, nullable(a), nullable(b))
		}
	}
	set("issuer", cur.Issuer, next.Issuer)
	set("audience", cur.Audience, next.Audience)
	set("repos", scangate.FormatRepos(cur.Repos), scangate.FormatRepos(next.Repos))
	set("conditions", conditionsText(cur), conditionsText(next))
}

// conditionsText is a trust's conditions as its audit entry shows them
// ("" for no trust).
func conditionsText(t scangate.Trust) string {
	if t.Name == "" {
		return ""
	}
	b, _ := json.Marshal(t.Conditions) // a map of strings always encodes
	return string(b)
}

// Trust reads a trust by name (strongly consistent).
func (s *Store) Trust(ctx context.Context, name string) (scangate.Trust, error) {
	it, err := s.getItem(ctx, "get trust", trustKey(name))
	if err != nil {
		return scangate.Trust{}, err
	}
	if it == nil {
		return scangate.Trust{}, scangate.Errorf(scangate.KindNotFound, "no trust is named %s", name)
	}
	return trustFrom(it)
}

// PutTrust creates or replaces the trust t.Name, with its audit entry
// (what changed).
func (s *Store) PutTrust(ctx context.Context, t scangate.Trust, who scangate.Who, now time.Time) (scangate.Trust, error) {
	if t.Conditions == nil {
		t.Conditions = map[string]string{}
	}
	conds, err := json.Marshal(t.Conditions)
	if err != nil {
		return scangate.Trust{}, fmt.Errorf("encode the trust's conditions: %w", err)
	}
	err = s.retry.Do(ctx, "put trust", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get trust", trustKey(t.Name))
		if err != nil {
			return true, err
		}
		var cur scangate.Trust
		var ver int64
		c := when("attribute_not_exists(" + ref(aPK) + ")")
		if it != nil {
			if cur, err = trustFrom(it); err != nil {
				return true, err
			}
			ver = getN(it, aVer)
			c = when(ref(aVer)+" = :ver", ":ver", num(ver))
		}
		t.UpdatedAt, t.UpdatedBy = scangate.At(now), actorID(who)
		changes := scangate.Changes{}
		trustChanges(changes, cur, t)
		tx := s.newTx()
		tx.put(lTrust, merge(trustKey(t.Name), item{aName: str(t.Name), aIssuer: str(t.Issuer), aAudience: str(t.Audience),
			aRepos: str(scangate.FormatRepos(t.Repos)), aConditions: str(string(conds)), aUpdBy: num(t.UpdatedBy),
			aUpdatedAt: str(t.UpdatedAt.String()), aVer: num(ver + 1)}), c)
		s.addAudit(tx, scangate.NewAudit(scangate.AuditOIDCTrustPut, who, scangate.Target{Type: "oidc_trust", ID: t.Name}, changes, now))
		err = s.commit(ctx, "put trust", tx)
		if lostRace(err, lTrust) {
			return false, nil
		}
		return true, err
	})
	return t, err
}

// DeleteTrust removes a trust, with its audit entry (what it held): 404
// when there is none. Id tokens it let in are refused from then on; scan
// tokens already issued run out within their hour.
func (s *Store) DeleteTrust(ctx context.Context, name string, who scangate.Who, now time.Time) error {
	return s.retry.Do(ctx, "delete trust", func(int) (bool, error) {
		it, err := s.getItem(ctx, "get trust", trustKey(name))
		if err != nil || it == nil {
			if err == nil {
				err = scangate.Errorf(scangate.KindNotFound, "no trust is named %s", name)
			}
			return true, err
		}
		cur, err := trustFrom(it)
		if err != nil {
			return true, err
		}
		changes := scangate.Changes{}
		trustChanges(changes, cur, scangate.Trust{})
		tx := s.newTx()
		tx.del(lTrust, trustKey(name), when(ref(aVer)+" = :ver", ":ver", num(getN(it, aVer))))
		s.addAudit(tx, scangate.NewAudit(scangate.AuditOIDCTrustDelete, who, scangate.Target{Type: "oidc_trust", ID: name}, changes, now))
		err = s.commit(ctx, "delete trust", tx)
		if lostRace(err, lTrust) {
			return false, nil
		}
		return true, err
	})
}

// Trusts reads every trust of an issuer, by name (strongly consistent, so
// that a trust deleted a moment ago lets nothing in): one Query of the
// trusts' partition, with the issuer as a filter.
func (s *Store) Trusts(ctx context.Context, issuer string) ([]scangate.Trust, error) {
	items, err := s.queryAll(ctx, "list trusts", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk"),
		FilterExpression:          aws.String(ref(aIssuer) + " = :iss"),
		ExpressionAttributeValues: item{":pk": str(trustPK), ":iss": str(issuer)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	out := make([]scangate.Trust, 0, len(items))
	for _, it := range items {
		t, err := trustFrom(it)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
