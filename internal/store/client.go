package store

import (
	"github.com/scangate/scangate/internal/awsclient"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/metrics"
)

// Open builds the store of the configuration cfg, its client's
// credentials read through getenv, emitting its metrics (gate decisions,
// recordings, DynamoDB's throttles) through m: what every function's main
// does once, at init.
func Open(cfg config.Config, getenv func(string) string, m *metrics.Emitter) (*Store, error) {
	db, err := awsclient.DynamoDBFromEnv(getenv, cfg.Endpoint, awsclient.CountThrottles(m))
	if err != nil {
		return nil, err
	}
	return New(db, cfg.Table, WithAuditRetention(cfg.AuditRetention), WithWorkLease(cfg.WorkLease), WithMetrics(m)), nil
}
