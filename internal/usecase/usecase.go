// Package usecase holds what scangate does that more than one adapter
// starts: recording a SARIF log (POST /pr/scan/sarif and the ingest of an
// upload) and running the durable work a change leaves (the allowlist and
// policy routes, the scheduled expiry, the work queue's consumer). The
// HTTP adapter (internal/api) and the triggers (internal/trigger) sit above
// it; it reports failures as the domain's error kinds (internal/scangate),
// never as HTTP statuses, and reaches the store through interfaces.
package usecase
