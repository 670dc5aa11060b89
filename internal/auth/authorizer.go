package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/metrics"
	"github.com/scangate/scangate/internal/scangate"
)

// ErrUnauthorized is the error text API Gateway turns into a 401 from a
// TOKEN authorizer.
var ErrUnauthorized = errors.New("Unauthorized")

// AuthorizerStore is what the authorizer reads: a token and its user in
// one round trip; and it records when a token was last used.
type AuthorizerStore interface {
	TokenUser(ctx context.Context, hash string, userID int64) (*scangate.Token, *scangate.User, error)
	TouchToken(ctx context.Context, hash string, now time.Time) error
}

// Authorizer is the Lambda TOKEN authorizer.
type Authorizer struct {
	Store AuthorizerStore
	Now   func() time.Time
	Log   *slog.Logger
}

// Handle answers Unauthorized for a missing, malformed, unknown, expired or
// revoked token or an inactive user, and otherwise an Allow policy for the
// whole API (so one cached answer serves every route) with the caller in its
// context. A token whose checksum fails costs no database read.
func (a Authorizer) Handle(ctx context.Context, req events.APIGatewayCustomAuthorizerRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	start := time.Now()
	caller, reason, err := a.authorize(ctx, req.AuthorizationToken)
	attrs := []any{"operation", "Authorize", "duration_ms", time.Since(start).Milliseconds()}
	switch {
	case err != nil:
		a.Log.ErrorContext(ctx, "authorize", append(attrs, "error", err.Error())...)
		return events.APIGatewayCustomAuthorizerResponse{}, fmt.Errorf("authorize: %w", err)
	case reason != "":
		a.Log.InfoContext(ctx, "authorize", append(attrs, "result", "deny", "reason", reason)...)
		// The reasons are a few fixed phrases: a dimension of low
		// cardinality.
		metrics.New(a.Log).Emit(ctx, []metrics.Dim{{Name: metrics.DimCause, Value: reason}}, metrics.CountOf(metrics.AuthorizerDenied, 1))
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	a.Log.InfoContext(ctx, "authorize", append(attrs, "result", "allow", "user_id", caller.ID)...)
	answer := map[string]any{
		"user_id":   strconv.FormatInt(caller.ID, 10),
		"username":  caller.Username,
		"role":      string(caller.Role),
		"issued_at": strconv.FormatInt(caller.IssuedAt.UnixMilli(), 10),
		"token_id":  strconv.FormatInt(caller.TokenID, 10),
		"scope":     caller.Scope,
	}
	if caller.Repos != nil {
		// The repositories a scoped token reaches, for the reads (writes
		// read them again with the token).
		answer["repos"] = scangate.FormatRepos(caller.Repos)
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: strconv.FormatInt(caller.ID, 10),
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
			Version: "2012-10-17",
			Statement: []events.IAMPolicyStatement{{
				Action:   []string{"execute-api:Invoke"},
				Effect:   "Allow",
				Resource: []string{WholeAPI(req.MethodArn)},
			}},
		},
		Context: answer,
	}, nil
}

// authorize returns the caller, or why the token is refused.
func (a Authorizer) authorize(ctx context.Context, header string) (scangate.Caller, string, error) {
	token, ok := BearerToken(header)
	if !ok {
		return scangate.Caller{}, "no bearer token", nil
	}
	userID, err := ParseToken(token)
	if err != nil {
		return scangate.Caller{}, "malformed token", nil
	}
	tok, user, err := a.Store.TokenUser(ctx, HashToken(token), userID)
	if err != nil {
		return scangate.Caller{}, "", err
	}
	if reason := Refusal(tok, user, userID, a.Now()); reason != "" {
		return scangate.Caller{}, reason, nil
	}
	if now := a.Now(); now.Sub(tok.LastUsedAt) >= scangate.LastUsedResolution {
		// At most one write a minute a token; a failure to record it
		// refuses nobody.
		if err := a.Store.TouchToken(ctx, tok.Hash, now); err != nil {
			a.Log.WarnContext(ctx, "record token use", "error", err.Error())
		}
	}
	return scangate.Caller{ID: user.ID, Username: user.Username, Role: user.Role, IssuedAt: tok.CreatedAt,
		TokenID: tok.ID, Scope: tok.Scope, Repos: tok.Repos}, "", nil
}

// Refusal says why a token may not act for the user userID at now, as it
// and its user are stored (nil when missing): unknown, revoked, expired,
// a user that is inactive, or a token issued before the user's last
// deactivation; "" when it may. The authorizer, every write (internal/api) and
// the ingest of uploads (internal/trigger) apply it.
func Refusal(tok *scangate.Token, user *scangate.User, userID int64, now time.Time) string {
	switch {
	case tok == nil || tok.UserID != userID:
		return "unknown token"
	case tok.Revoked:
		return "revoked token"
	case !now.Before(tok.ExpiresAt):
		return "expired token"
	case user == nil || !user.Active:
		return "inactive user"
	case tok.CreatedAt.Before(user.TokensValidFrom):
		return "token issued before a deactivation"
	}
	return ""
}

// WholeAPI turns the ARN of one method into the ARN of every method of the
// same API and stage: arn:...:api-id/stage/*/*.
func WholeAPI(methodARN string) string {
	parts := strings.SplitN(methodARN, "/", 3)
	if len(parts) < 2 {
		return methodARN
	}
	return parts[0] + "/" + parts[1] + "/*/*"
}
